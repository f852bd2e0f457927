"""Where a bundled server lives on disk: `ServerLayout`, its folders and files, and the default one `gqa db` manages.

Layout under its root (the default: `gqa_home()/neo4j`, GQA_HOME, default ~/.cache/gqa):

    lib/<version>-<lock digest>/   the jars (shared by every layout that points its jar cache here)
    home/conf/neo4j.conf           written by `configure`; 127.0.0.1 only, auth on, https off
    home/{data,logs,run,plugins,import}
    password                       generated once, mode 0600 (settings.py reads it as the default password)

A layout is only paths; tests and benchmarks make their own under a temporary folder and share the jar cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gretriever_neo4j.server.lockfile import packaged_lock
from gretriever_neo4j.settings import gqa_home


@dataclass(frozen=True)
class ServerLayout:
    root: Path
    jar_cache: Path  # parent of the versioned jar directories; another layout may share it

    @classmethod
    def at(cls, root: str | Path, *, jar_cache: str | Path | None = None) -> ServerLayout:
        root = Path(root).expanduser().absolute()
        return cls(root, Path(jar_cache).expanduser().absolute() if jar_cache else root / "lib")

    @classmethod
    def default(cls) -> ServerLayout:
        return cls.at(gqa_home() / "neo4j")

    @property
    def lib_dir(self) -> Path:
        lock = packaged_lock()
        return self.jar_cache / f"{lock.neo4j_version}-{lock.digest[:8]}"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def conf_dir(self) -> Path:
        return self.home / "conf"

    @property
    def conf_file(self) -> Path:
        return self.conf_dir / "neo4j.conf"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    @property
    def plugins_dir(self) -> Path:
        return self.home / "plugins"

    @property
    def import_dir(self) -> Path:
        return self.home / "import"

    @property
    def password_file(self) -> Path:
        return self.root / "password"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / "gqa-neo4j.pid"

    @property
    def console_log(self) -> Path:
        return self.logs_dir / "console.log"

    @property
    def neo4j_log(self) -> Path:
        return self.logs_dir / "neo4j.log"

    @property
    def debug_log(self) -> Path:
        return self.logs_dir / "debug.log"

    @property
    def password_marker(self) -> Path:
        """Sits in the data directory because the initial password belongs to that database."""
        return self.data_dir / ".gqa-initial-password-set"

    def make_dirs(self) -> None:
        for directory in (self.conf_dir, self.data_dir, self.logs_dir, self.run_dir, self.plugins_dir,
                          self.import_dir):
            directory.mkdir(parents=True, exist_ok=True)


def default_layout() -> ServerLayout:
    """The layout `gqa db` manages: gqa_home()/neo4j."""
    return ServerLayout.default()
