"""Other inference backends for the bundled model against PyTorch: ONNX Runtime (fp32, and int8
dynamically quantised) and OpenVINO (fp32), on this machine's CPU.

    pip install --target /tmp/backends --no-deps onnx onnxruntime openvino openvino-telemetry \\
        protobuf flatbuffers
    PYTHONPATH=/tmp/backends python tests/benchmarks/bench_backends.py [--n 1000] [--rounds 2]

They are not parm dependencies (optimum, which wraps them for sentence-transformers, breaks
sentence-transformers 6.2: FACTS), so this script exports the bundled model's transformer to
ONNX itself (torch.onnx.export) and pools as the model does (mean over the tokens, unit length).
Texts: the first N answers of ASAP-SAS prompt 1, longest first in batches of 32, as parm encodes
them. Every backend runs with two threads (PyTorch with one as well); the backends alternate,
`--rounds` times, and the best time of each is printed with its speed-up over PyTorch, the
cosine of its vectors to sentence-transformers' encode (lowest and mean) and the share of each
answer's 34 nearest neighbours it keeps. The issue's rule: a backend ships only if it is at
least 1.5 times as fast and no dataset loses more
than 0.005 in kappa, AUROC (real, injected) or near-duplicates found.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("PARM_DATA_ROOT", ROOT.parent / "shared" / "data"))
THREADS = 2
BATCH = 32


def batches(tokenizer, texts: list[str]):
    order = np.argsort([len(t) for t in texts], kind="stable")[::-1]
    for start in range(0, len(texts), BATCH):
        chosen = order[start : start + BATCH]
        features = tokenizer(
            [texts[i] for i in chosen], padding=True, truncation=True, max_length=256,
            return_tensors="np",
        )  # fmt: skip
        yield chosen, {k: v.astype(np.int64) for k, v in features.items()}


def pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    summed = (hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
    return summed / np.linalg.norm(summed, axis=1, keepdims=True)


def run(backend, tokenizer, texts: list[str]) -> tuple[np.ndarray, float]:
    vectors = np.zeros((len(texts), 384), dtype=np.float32)
    started = time.perf_counter()
    for chosen, features in batches(tokenizer, texts):
        vectors[chosen] = pooled(backend(features), features["attention_mask"])
    return vectors, time.perf_counter() - started


def backends(model, folder: Path) -> dict:
    import torch

    torch.set_num_threads(THREADS)
    transformer = model[0].auto_model.eval()

    def with_torch(features):
        with torch.inference_mode():
            inputs = {k: torch.from_numpy(v) for k, v in features.items()}
            return transformer(**inputs).last_hidden_state.numpy()

    def with_torch_one_thread(features):
        torch.set_num_threads(1)
        try:
            return with_torch(features)
        finally:
            torch.set_num_threads(THREADS)

    onnx_path = folder / "minilm.onnx"
    # Two texts of different lengths: traced on a batch without padding, the exported graph
    # would take transformers' no-mask branch and ignore the padding of every later batch.
    dummy = model.tokenizer(["a b c d e f g", "a"], padding=True, return_tensors="pt")
    names = list(dummy.keys())

    class ByName(torch.nn.Module):
        """A copy of the transformer with its inputs by name (their positional order is not
        theirs); a copy, because tracing leaves the traced module giving other vectors."""

        def __init__(self):
            super().__init__()
            self.transformer = copy.deepcopy(transformer)

        def forward(self, *inputs):
            return self.transformer(**dict(zip(names, inputs))).last_hidden_state

    torch.onnx.export(
        ByName(), tuple(dummy[k] for k in names), str(onnx_path), input_names=names,
        output_names=["last_hidden_state"], opset_version=17, dynamo=False,
        dynamic_axes={**{k: {0: "batch", 1: "tokens"} for k in names},
                      "last_hidden_state": {0: "batch", 1: "tokens"}},
    )  # fmt: skip
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    int8_path = folder / "minilm-int8.onnx"
    quantize_dynamic(str(onnx_path), str(int8_path), weight_type=QuantType.QInt8)
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    fp32 = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    int8 = ort.InferenceSession(str(int8_path), options, providers=["CPUExecutionProvider"])
    import openvino as ov

    core = ov.Core()
    core.set_property("CPU", {"INFERENCE_NUM_THREADS": THREADS})
    compiled = core.compile_model(str(onnx_path), "CPU")

    def with_openvino(features):
        return compiled(features)[0]

    return {
        "PyTorch (sentence-transformers' model)": with_torch,
        "PyTorch, one thread": with_torch_one_thread,
        "ONNX Runtime fp32": lambda f: fp32.run(None, f)[0],
        "ONNX Runtime int8 (dynamic)": lambda f: int8.run(None, f)[0],
        "OpenVINO fp32": with_openvino,
    }


def neighbours_kept(reference: np.ndarray, other: np.ndarray, k: int = 34) -> float:
    def top(vectors):
        similarity = vectors @ vectors.T
        np.fill_diagonal(similarity, -np.inf)
        return np.argsort(-similarity, axis=1, kind="stable")[:, :k]

    a, b = top(reference), top(other)
    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(a, b)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from engine.embedding.loading import model_for

    model, _ = model_for("sentence-transformers/all-MiniLM-L6-v2", device="cpu")
    frame = pd.read_csv(DATA / "asap-sas" / "prompt1-train.csv", dtype=str, keep_default_na=False)
    texts = frame["EssayText"].tolist()[: args.n]
    print(
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {len(texts)} answers", flush=True
    )
    # The reference: the vectors parm's own path gives (sentence-transformers' encode).
    reference = model.encode(texts, batch_size=BATCH, convert_to_numpy=True)
    with tempfile.TemporaryDirectory() as folder:
        found = backends(model, Path(folder))
        best, vectors = {}, {}
        for _ in range(args.rounds):
            for name, backend in found.items():
                vectors[name], seconds = run(backend, model.tokenizer, texts)
                best[name] = min(best.get(name, np.inf), seconds)
                print(f"{name}: {seconds:.1f} s (load {os.getloadavg()[0]:.1f})", flush=True)
    print("| backend | best s | speed-up | cosine to encode(): lowest / mean | 34-NN kept |")
    print("| --- | ---: | ---: | --- | ---: |")
    for name in found:
        cosine = np.sum(vectors[name] * reference, axis=1)
        print(
            f"| {name} | {best[name]:.1f} | {best[next(iter(found))] / best[name]:.2f}x | "
            f"{cosine.min():.4f} / {cosine.mean():.4f} | "
            f"{neighbours_kept(reference, vectors[name]):.1%} |"
        )


if __name__ == "__main__":
    main()
