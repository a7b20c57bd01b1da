"""Type stubs for the compiled extension mirkit._core (one submodule per domain)."""

from typing import Optional, Union

import numpy as np
import numpy.typing as npt

from . import _core_analysis as analysis
from . import _core_attention as attention
from . import _core_codecs as codecs
from . import _core_dedup as dedup
from . import _core_geometry as geometry
from . import _core_graph as graph
from . import _core_image as image
from . import _core_index as index
from . import _core_late as late
from . import _core_ltr as ltr
from . import _core_query as query
from . import _core_text as text
from . import _core_vectors as vectors

__version__: str
compiler: str
simd_levels: list[str]

def detected_simd_level() -> str: ...
def simd_level() -> str: ...
def set_simd_level(name: str) -> str: ...
def unset_simd_level() -> str: ...
def simd_level_forced() -> bool: ...
def cpu_features() -> dict[str, bool]: ...
def cpu_description() -> dict[str, str | int]: ...
def dispatch_reason(family: str, chosen: str) -> str: ...
def dispatch_choice(
    family: str, vendor: str, cpu_family: int, model: int, level: str, paths: list[str]
) -> tuple[str, str]: ...
