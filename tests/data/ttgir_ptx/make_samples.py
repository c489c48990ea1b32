"""Compile the samples of tests/test_ttgir_ptx.py on the CPU (no GPU needed):
``python tests/data/ttgir_ptx/make_samples.py`` from the repository root writes
each kernel's TTGIR and PTX (``NAME.smNN.ttgir``, ``NAME.smNN.ptx``) here."""

from __future__ import annotations

import importlib.util
import os

from verify.ttgir.kernel import compile_kernel

OUT = os.path.dirname(__file__)
# (file, function, constexprs, signature, options, targets)
SAMPLES: list[tuple[str, str, dict, dict, dict, tuple[str, ...]]] = [
    ("permuted_store", "permuted_store", {}, {"x_ptr": "*fp32", "y_ptr": "*fp32"}, {}, ("sm_80",)),
]


def load(module: str, function: str):
    path = os.path.join(OUT, f"{module}.py")
    spec = importlib.util.spec_from_file_location(f"_sample_{module}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, function)


def main() -> None:
    for module, function, constexprs, signature, options, targets in SAMPLES:
        fn = load(module, function)
        for target in targets:
            compiled = compile_kernel(fn, target, constexprs, signature, **options)
            stem = os.path.join(OUT, f"{function}.{target.replace('_', '')}")
            for kind in ("ttgir", "ptx"):
                text = compiled.asm[kind].replace(os.getcwd() + "/", "")
                with open(f"{stem}.{kind}", "w", encoding="utf-8") as f:
                    f.write(text)
            print(stem, compiled.metadata.shared)


if __name__ == "__main__":
    main()
