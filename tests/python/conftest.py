import itertools

import pytest

import opreg

_counter = itertools.count()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cuda: runs on CUDA tensors (skipped, with the reason, without a CUDA device); "
                   "`pytest -m cuda` runs only these")


def cuda_skip_reason():
    """Why the CUDA cases cannot run here, or None when they can."""
    try:
        import torch
    except ImportError:
        return "torch is not installed (pip install torch)"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} sees no CUDA device"
    if not opreg.cuda.is_available():
        return "opreg sees no CUDA device (built with OPREG_BUILD_CUDA=OFF?)"
    return None


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def device(request):
    """The device a test's tensors live on: each such test runs on CPU and on CUDA."""
    if request.param == "cuda":
        why = cuda_skip_reason()
        if why:
            pytest.skip(why)
    return request.param


@pytest.fixture
def ns():
    """A fresh op namespace per test (registrations of one test never meet another's)."""
    return f"pytest_ns{next(_counter)}"


@pytest.fixture(scope="session", autouse=True)
def test_ops():
    opreg._C._load_test_ops()
