"""Storage settings: who owns the files on the shared Azure Files volumes."""

from __future__ import annotations

from dataclasses import dataclass

from components.config import defaults
from components.config.node import ConfigNode


@dataclass(frozen=True)
class StorageSettings:
    # SMB shares carry no POSIX owners: the mount decides them for every file. Training images that run as
    # a non-root user (uid/gid 1000 in most base images) need to own what they write.
    uid: int
    gid: int


def read_storage(node: ConfigNode) -> StorageSettings:
    default = defaults.STORAGE
    f = node.fields(default)
    # 0 (root) is refused: the point is that jobs need not run as root to write their checkpoints.
    return StorageSettings(
        uid=f["uid"].or_default(default["uid"]).integer(minimum=1, maximum=2147483647),
        gid=f["gid"].or_default(default["gid"]).integer(minimum=1, maximum=2147483647),
    )
