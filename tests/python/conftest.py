import itertools

import pytest

import opreg

_counter = itertools.count()


@pytest.fixture
def ns():
    """A fresh op namespace per test (registrations of one test never meet another's)."""
    return f"pytest_ns{next(_counter)}"


@pytest.fixture(scope="session", autouse=True)
def test_ops():
    opreg._C._load_test_ops()
