import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Hypothesis's per-example deadline measures wall time, so a machine whose cores are busy with another job
# fails property tests that are correct; the suite must pass under load, so no example has a deadline.
from hypothesis import settings  # noqa: E402

settings.register_profile("loaded-machine", deadline=None)
settings.load_profile("loaded-machine")
