"""engine.embedding.models: where a model runs (`device`: auto, cpu, cuda), with CUDA asked of
PyTorch by its documented API; a GPU asked for where PyTorch sees none is a clear error."""

from __future__ import annotations

import socket

import pytest
import torch

from engine.core.errors import EmbeddingError
from engine.embedding import loading, models
from engine.embedding.sentence import embed_texts


class RecordingModel:
    """A stand-in for SentenceTransformer that remembers the device it was made for."""

    made: list = []

    def __init__(self, path, device=None, **_):
        RecordingModel.made.append(device)
        self.device = device


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    if getattr(torch.backends, "mps", None) is not None:
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


def test_auto_is_the_cpu_where_pytorch_sees_no_gpu(no_gpu):
    assert models.resolve_device("auto") == "cpu"
    assert models.resolve_device("cpu") == "cpu"


def test_auto_and_cuda_are_the_gpu_where_pytorch_sees_one(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert models.resolve_device("auto") == "cuda"
    assert models.resolve_device("cuda") == "cuda"


def test_cuda_where_pytorch_sees_no_gpu_is_an_error_naming_the_machine(no_gpu):
    with pytest.raises(EmbeddingError) as caught:
        models.resolve_device("cuda")
    message = str(caught.value)
    assert message.startswith("Setting 'device' = \"cuda\", but PyTorch on ")
    assert socket.gethostname() in message and "set device to auto or cpu" in message


def test_the_model_is_made_on_the_device_asked_for(monkeypatch, tmp_path, no_gpu):
    monkeypatch.setattr(models, "_MODELS", {})
    RecordingModel.made.clear()
    models.load_sentence_model(str(tmp_path), factory=RecordingModel, device="cpu")
    models.load_sentence_model(str(tmp_path), factory=RecordingModel, device="auto")
    assert RecordingModel.made == ["cpu"]  # auto is the cpu here: one model, made once


def test_embedding_on_a_missing_gpu_stops_before_any_model_loads(monkeypatch, no_gpu):
    monkeypatch.setattr(loading, "_LOADS", {})
    made = []
    monkeypatch.setattr(models, "_load_by_name", lambda *args: made.append(args))
    with pytest.raises(EmbeddingError, match="device"):
        embed_texts(["an answer never embedded before"], "some/model", device="cuda")
    assert made == []
