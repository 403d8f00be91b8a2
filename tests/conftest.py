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

# The project speaks Russian unless told otherwise (LANG, --lang, the config's language). Most tests read the
# English words of the command line and the pages, so the session runs under an English locale; the tests of
# the Russian default (tests/test_i18n.py, test_documents.py, test_browser_russian.py) set their own.
import os  # noqa: E402

import pytest  # noqa: E402

os.environ["LANG"] = "en_US.UTF-8"
for _name in ("LC_ALL", "LC_MESSAGES"):
    os.environ.pop(_name, None)


# `make test` runs the files on parallel workers (pytest-xdist, one file per worker at a time, in this order:
# --no-loadscope-reorder): the files with the longest tests go first, so that no worker is left alone with one of
# them at the end.
LONG_FILES = (
    "test_security_fuzz_api.py",  # the OpenAPI fuzz: ~75 s on a quiet machine
    "test_day.py",
    "test_crash_day.py",
    "test_relay.py",
    "test_bank_writers.py",
    "test_browser_guides.py",
    "test_camera_recognition.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    first = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: first.get(item.path.name, len(LONG_FILES)))  # stable: order within a file kept
