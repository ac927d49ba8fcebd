"""HKU LightRAG's ``lightrag.kg`` names that its programs import (see :mod:`.shared_storage`)."""
