"""The type stubs (adnn/__init__.pyi) are shipped and cover the public API."""
import ast
import os

import adnn


def stub_tree():
    path = os.path.join(os.path.dirname(adnn.__file__), "__init__.pyi")
    assert os.path.exists(path), f"{path}: not installed (package_data)"
    with open(path) as f:
        return ast.parse(f.read())


def top_level_names(tree):
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names[t.id] = node
    return names


def test_every_public_name_is_stubbed():
    names = top_level_names(stub_tree())
    public = set(adnn.__all__) | {n for n in dir(adnn) if not n.startswith("_")} | {"__version__"}
    public -= {"annotations"}
    missing = sorted(n for n in public if n not in names)
    assert not missing, f"not in adnn/__init__.pyi: {missing}"
    assert set(adnn.OPS) <= set(names)


def test_stubbed_classes_list_their_members():
    names = top_level_names(stub_tree())
    for cls in (adnn.Context, adnn.Tensor):
        stubbed = {n.name for n in names[cls.__name__].body if isinstance(n, ast.FunctionDef)}
        members = {m for m in dir(cls) if not m.startswith("_") or m.startswith("__dlpack")}
        missing = sorted(members - stubbed)
        assert not missing, f"{cls.__name__}: not stubbed: {missing}"


def test_op_stubs_have_the_functions_keywords():
    # The op functions' docstrings (generated from the binding tables) list their
    # parameters; the stubs must name the same ones.
    names = top_level_names(stub_tree())
    for op in adnn.OPS + ("gemm",):
        fn = names[op]
        stubbed = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
        sig = getattr(adnn, op).__doc__.split("\n")[0]
        params = sig[sig.index("(") + 1:sig.index(")")]
        doc = {p.strip().split("=")[0] for p in params.split(",")} - {"*", ""}
        assert doc == stubbed, f"{op}: docstring {sorted(doc)} vs stub {sorted(stubbed)}"
