"""``python -m lightrag.cli ...``: the ``lightrag`` command."""

import sys

from lightrag.cli import main

if __name__ == "__main__":
    sys.exit(main())
