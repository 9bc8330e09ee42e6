import os
import pathlib

import pytest

SHARED = pathlib.Path(os.environ.get("CACHEPART_SHARED", pathlib.Path(__file__).resolve().parents[3] / "shared"))
PBB = SHARED / "data" / "pbbcache"


@pytest.fixture
def pbb():
    if not (PBB / "metrics.csv").is_file():
        pytest.skip(f"PBBCache reference data not found at {PBB} (set CACHEPART_SHARED)")
    return PBB
