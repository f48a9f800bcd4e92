"""Probes of opreg's extension surfaces: schema text (Library.define, opreg._C._schema_info),
opreg.Library, opreg.custom_op, opreg.load_library on hostile paths and opreg.symm_mem
without a peer."""
from __future__ import annotations

import os

from .model import REPO_ROOT, Gen, Probe
from .schemas import HOSTILE_SCHEMAS


def gen_schema_probes(g: Gen) -> None:
    """Library.define, opreg.library.define and opreg._C._schema_info with hostile text."""
    for i, (pid, text) in enumerate(HOSTILE_SCHEMAS):
        s = text.replace("{i}", str(i))
        ns = f"hostile_ns{i}"
        key = pid in ("paren-nesting-1e5", "return-nesting-1e5", "dict-nesting-1e4", "long-name-1e6",
                      "dup-args", "alias-unclosed", "list-default-nesting-1e5", "list-chain-1e5", "valid")
        setup = f"_lib = opreg.Library('{ns}', 'FRAGMENT'); _text = SCHEMA_TEXTS[{i}]"
        g.add(Probe(id=f"schema/define-{pid}", surface="schema", key=key, setup=setup,
                    call="_lib.define(_text)",
                    expect=f"chk_schema('{ns}::' + r, _text)",
                    op_tokens=("col", "column", "schema", "define", f"hx{i}"), arg_tokens=()))
        if pid in ("valid", "paren-nesting-1e5", "return-nesting-1e5", "dict-nesting-1e4", "list-chain-1e5",
                   "list-default-nesting-1e5", "future-nesting", "nul-in-name", "junk-binary"):
            g.add(Probe(id=f"schema/schema_info-{pid}", surface="schema",
                        setup=f"_text = SCHEMA_TEXTS[{i}]", call="opreg._C._schema_info(_text)",
                        expect="None", op_tokens=("col", "schema"), arg_tokens=()))
    # The reprs above read SCHEMA_TEXTS[i]: HOSTILE_SCHEMAS[i] with {i} replaced by i.
    defined_in = "(lambda l: (l, l.define('f(Tensor x) -> Tensor')))(opreg.Library({}, 'FRAGMENT'))"
    libs = [("ns-empty", defined_in.format("''")), ("ns-colons", defined_in.format("'a::b'")),
            ("ns-unicode", defined_in.format("'ünï'")), ("ns-long", defined_in.format("'n' * 10**6")),
            ("ns-digit", defined_in.format("'1ns'")), ("ns-space", defined_in.format("'a b'")),
            ("ns-None", "opreg.Library(None, 'FRAGMENT')"),
            ("ns-opreg-DEF", "opreg.Library('opreg', 'DEF')"), ("kind-bogus", "opreg.Library('hostile_k', 'BOGUS')"),
            ("kind-lower", "opreg.Library('hostile_k2', 'def')"),
            ("impl-bad-key", "opreg.Library('hostile_k3', 'IMPL', 'NoSuchKey')"),
            ("impl-unknown-op", "opreg.Library('opreg', 'IMPL', 'CPU').impl('no_such_op', lambda x: x)"),
            ("impl-not-callable", "opreg.Library('opreg', 'IMPL', 'CPU').impl('add', 42)"),
            ("define-twice", "(lambda l: (l.define('twice(Tensor x) -> Tensor'), l.define('twice(Tensor x) -> Tensor')))(opreg.Library('hostile_twice', 'FRAGMENT'))"),
            ("define-bad-tag", "opreg.Library('hostile_tag', 'FRAGMENT').define('t(Tensor x) -> Tensor', tags=('no_such_tag',))"),
            ("define-alias-analysis", "opreg.Library('hostile_aa', 'FRAGMENT').define('t(Tensor x) -> Tensor', 'BOGUS')"),
            ("module-define-no-ns", "opreg.library.define('noqualifier', '(Tensor x) -> Tensor')"),
            ("module-define-bad-schema", "opreg.library.define('hostile_md::f', '(Tensor x -> Tensor')"),
            ("symm-args-unknown", "(lambda l: (l.define('sm(Tensor x) -> Tensor'), l.register_symm_mem_args('sm', ['nope'])))(opreg.Library('hostile_sm', 'FRAGMENT'))"),
            ("link-out-unknown", "(lambda l: (l.define('lo(Tensor x) -> Tensor'), l.link_out_variant('lo', 'lo_out', ['out'])))(opreg.Library('hostile_lo', 'FRAGMENT'))")]
    for pid, call in libs:
        g.add(Probe(id=f"schema/library-{pid}", surface="schema", call=call,
                    expect=("chk_library_ns(r[0])" if pid.startswith("ns-") else "'unchecked: accepted'")
                    if pid not in ("ns-opreg-DEF", "define-twice") else "'accepted a second owner/definition'",
                    key=pid in ("ns-opreg-DEF", "define-twice", "impl-unknown-op"),
                    op_tokens=("library", "namespace", "ns", "kind", "define", "impl", "op", "schema", "tag",
                               "dispatch", "callable", "alias_analysis"),
                    arg_tokens=()))


def gen_custom_op_probes(g: Gen) -> None:
    """opreg.custom_op with hostile names, mutates_args and functions."""
    fn = "def f(x: opreg.Tensor) -> opreg.Tensor:\n    return x.clone()"
    cases = [
        ("no-separator", fn, "opreg.custom_op('noseparator', f, mutates_args=())", ""),
        ("empty-name", fn, "opreg.custom_op('hostile_co::', f, mutates_args=())", ""),
        ("empty-ns", fn, "opreg.custom_op('::f', f, mutates_args=())", ""),
        ("long-name", fn, "opreg.custom_op('hostile_co::' + 'f' * 10**6, f, mutates_args=())",
         "chk_custom(r, rnd((2, 3)), rnd((2, 3)))"),
        ("unicode-name", fn, "opreg.custom_op('hostile_co::fü', f, mutates_args=())", ""),
        ("mutates-bogus", fn, "opreg.custom_op('hostile_co::mb', f, mutates_args=('nope',))", ""),
        ("mutates-str", fn, "opreg.custom_op('hostile_co::ms', f, mutates_args='bogus')", ""),
        ("mutates-missing", fn, "opreg.custom_op('hostile_co::mm', f)", ""),
        ("no-annotations", "def f(x):\n    return x", "opreg.custom_op('hostile_co::na', f, mutates_args=())", ""),
        ("varargs", "def f(*xs: opreg.Tensor) -> opreg.Tensor:\n    return xs[0]",
         "opreg.custom_op('hostile_co::va', f, mutates_args=())", ""),
        ("kwargs", "def f(x: opreg.Tensor, **kw) -> opreg.Tensor:\n    return x",
         "opreg.custom_op('hostile_co::kw', f, mutates_args=())", ""),
        ("unsupported-type", "def f(x: dict) -> opreg.Tensor:\n    return x",
         "opreg.custom_op('hostile_co::ut', f, mutates_args=())", ""),
        ("bad-default", "def f(x: opreg.Tensor, n: int = 'a') -> opreg.Tensor:\n    return x",
         "opreg.custom_op('hostile_co::bd', f, mutates_args=())", ""),
        ("not-callable", "", "opreg.custom_op('hostile_co::nc', 42, mutates_args=())", ""),
        ("device-types-bogus", fn, "opreg.custom_op('hostile_co::dt', f, mutates_args=(), device_types='tpu')", ""),
        ("valid", fn, "opreg.custom_op('hostile_co::valid', f, mutates_args=())",
         "chk_custom(r, rnd((2, 3)), rnd((2, 3)))"),
        ("name-is-builtin", fn, "opreg.custom_op('opreg::add', f, mutates_args=())", ""),
        ("schema-string-hostile", fn, "opreg.custom_op('hostile_co::ss', f, mutates_args=(), schema='(Tensor x -> Tensor')", ""),
    ]
    for pid, setup, call, expect in cases:
        g.add(Probe(id=f"custom_op/{pid}", surface="custom_op", setup=setup, call=call,
                    expect=expect or "'unchecked: definition accepted'",
                    must_refuse="redefining opreg::add" if pid == "name-is-builtin" else "",
                    key=pid in ("name-is-builtin", "valid", "mutates-bogus"),
                    op_tokens=("custom_op", "infer_schema", "name", "schema", "mutates_args", "device", "column"),
                    arg_tokens=()))


def gen_load_library_probes(g: Gen) -> None:
    """opreg.load_library on hostile paths (files made in a temp dir by the probe's setup)."""
    mk = "import tempfile, os; _d = tempfile.mkdtemp(prefix='opreg_probe_')"
    build = REPO_ROOT / "build" / "release" / "tests" / "cpp"
    cases = [
        ("directory", f"{mk}", "opreg.load_library(_d)", ("directory", "not a file", "regular file")),
        ("text-file", f"{mk}; open(_d + '/t.so', 'w').write('hello')", "opreg.load_library(_d + '/t.so')", ()),
        ("empty-file", f"{mk}; open(_d + '/e.so', 'w').close()", "opreg.load_library(_d + '/e.so')", ()),
        ("dev-zero", "", "opreg.load_library('/dev/zero')", ("not a regular file", "device", "not a file")),
        ("dev-null", "", "opreg.load_library('/dev/null')", ("not a regular file", "device", "not a file")),
        ("fifo", f"{mk}; os.mkfifo(_d + '/f.so')", "opreg.load_library(_d + '/f.so')", ("fifo", "pipe", "not a regular file", "not a file")),
        ("missing", "", "opreg.load_library('/nonexistent/libnothing.so')", ()),
        ("symlink-loop", f"{mk}; os.symlink(_d + '/b', _d + '/a'); os.symlink(_d + '/a', _d + '/b')",
         "opreg.load_library(_d + '/a')", ("loop", "symbolic", "symlink")),
        ("truncated-elf", f"{mk}; open(_d + '/t.so', 'wb').write(open('{build}/libopreg_test_plugin.so', 'rb').read(200))",
         "opreg.load_library(_d + '/t.so')", ()),
        ("elf-magic-garbage", f"{mk}; open(_d + '/g.so', 'wb').write(b'\\x7fELF' + b'\\xff' * 4000)",
         "opreg.load_library(_d + '/g.so')", ()),
        ("executable", "", "opreg.load_library('/bin/true')", ()),
        ("nul-in-path", "", "opreg.load_library('/tmp/a\\x00b.so')", ()),
        ("int-path", "", "opreg.load_library(3)", ("path",)),
        ("None-path", "", "opreg.load_library(None)", ("path",)),
        ("long-path", "", "opreg.load_library('/tmp/' + 'x' * 5000 + '.so')", ()),
        ("broken-plugin", "", f"opreg.load_library('{build}/libopreg_test_plugin_broken.so')", ("registration",)),
    ]
    libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                             "/lib64/libm.so.6", "/usr/lib64/libm.so.6") if os.path.exists(p)), None)
    if libm:
        cases.append(("unrelated-lib", "", f"opreg.load_library('{libm}')", ()))
    for pid, setup, call, must_say in cases:
        must = "" if pid == "unrelated-lib" else (
            "a library with failing registrations, silently" if pid == "broken-plugin" else "a path that is no loadable library")
        g.add(Probe(id=f"load_library/{pid}", surface="load_library", setup=setup, call=call,
                    expect="None", must_refuse=must, key=pid in ("fifo", "dev-zero", "directory", "truncated-elf"),
                    op_tokens=("load_library", "libopreg_test_plugin_broken"), arg_tokens=must_say))


def gen_symm_mem_probes(g: Gen) -> None:
    """opreg.symm_mem in one process: no group, hostile group parameters, a lone rank."""
    mk = "import tempfile, os; _d = tempfile.mkdtemp(prefix='opreg_sm_')"
    grp = f"{mk}; import opreg.symm_mem as sm; _g = 'hg_' + os.path.basename(_d); sm.create_group(_g, 0, 1, _d, timeout_s=2)"
    sym = f"{grp}; _x = sm.empty((4,), 'float32', _g); _x.numpy()[:] = np.arange(4)"
    cases = [
        ("empty-no-group", "import opreg.symm_mem as sm", "sm.empty((4,), 'float32', 'no_such_group')", "", ("no_such_group",)),
        ("info-no-group", "import opreg.symm_mem as sm", "sm.group_info('no_such_group')", "", ("no_such_group",)),
        ("destroy-no-group", "import opreg.symm_mem as sm", "sm.destroy_group('no_such_group')", "", ("no_such_group",)),
        ("allreduce-no-group", "", "opreg.ops.symm_mem.one_shot_all_reduce(rnd((4,)), 'sum', 'no_such_group')", "", ("no_such_group", "input")),
        ("allreduce-no-args", "", "opreg.ops.symm_mem.one_shot_all_reduce()", "", ("input",)),
        ("world-0", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hw0', 0, 0, _d, timeout_s=1)", "", ("world_size", "world")),
        ("world-neg", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hwn', 0, -1, _d, timeout_s=1)", "", ("world_size", "world")),
        ("world-2**31", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hwh', 0, 2**31, _d, timeout_s=1)", "", ("world_size", "world")),
        ("rank-eq-world", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hrw', 1, 1, _d, timeout_s=1)", "", ("rank",)),
        ("rank-neg", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hrn', -1, 1, _d, timeout_s=1)", "", ("rank",)),
        ("store-missing", "import opreg.symm_mem as sm", "sm.create_group('hsm', 0, 1, '/nonexistent/store', timeout_s=1)", "", ("store", "/nonexistent/store")),
        ("store-is-file", "import opreg.symm_mem as sm", "sm.create_group('hsf', 0, 1, '/etc/hostname', timeout_s=1)", "", ("store", "/etc/hostname")),
        ("store-dev-null", "import opreg.symm_mem as sm", "sm.create_group('hsd', 0, 1, '/dev/null', timeout_s=1)", "", ("store", "/dev/null")),
        ("timeout-neg", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('htn', 0, 1, _d, timeout_s=-1)", "", ("timeout_s",)),
        ("timeout-nan", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('htnan', 0, 1, _d, timeout_s=float('nan'))", "", ("timeout_s",)),
        ("timeout-inf", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('htinf', 0, 1, _d, timeout_s=float('inf'))", "sm_ok(r, 'htinf')", ("timeout_s",)),
        ("heap-neg", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hhn', 0, 1, _d, timeout_s=1, heap_bytes=-1)", "", ("heap_bytes",)),
        ("heap-zero", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hhz', 0, 1, _d, timeout_s=1, heap_bytes=0)", "sm_ok(r, 'hhz')", ("heap_bytes",)),
        ("heap-2**62", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hhh', 0, 1, _d, timeout_s=1, heap_bytes=2**62)", "sm_ok(r, 'hhh')", ("heap_bytes", "heap")),
        ("heap-2**64", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hh64', 0, 1, _d, timeout_s=1, heap_bytes=2**64)", "", ("heap_bytes",)),
        ("channels-0", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hc0', 0, 1, _d, timeout_s=1, max_channels=0)", "sm_ok(r, 'hc0')", ("max_channels",)),
        ("channels-2**31", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hch', 0, 1, _d, timeout_s=1, max_channels=2**31)", "sm_ok(r, 'hch')", ("max_channels",)),
        ("name-empty", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('', 0, 1, _d, timeout_s=1)", "sm_ok(r, '')", ("name",)),
        ("name-long", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('g' * 100000, 0, 1, _d, timeout_s=1)", "sm_ok(r, 'g' * 100000)", ("name",)),
        ("name-slashes", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('../../etc/x', 0, 1, _d, timeout_s=1)", "sm_ok(r, '../../etc/x')", ("name",)),
        ("lone-rank-of-2", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hlone', 0, 2, _d, timeout_s=1)", "", ("rank", "peer", "timed out", "timeout")),
        ("twice", f"{grp}", "sm.create_group(_g, 0, 1, _d, timeout_s=1)", "", ("already", "exists")),
        ("empty-neg-size", f"{grp}", "sm.empty((-4,), 'float32', _g)", "", ("shape", "size")),
        ("empty-huge", f"{grp}", "sm.empty((2**62,), 'float32', _g)", "", ("shape", "size", "heap", "bytes")),
        ("empty-bytes-overflow", f"{grp}", "sm.empty((2**31, 2**31), 'float32', _g)", "", ("shape", "size", "heap", "bytes")),
        ("empty-bad-dtype", f"{grp}", "sm.empty((4,), 'bogus', _g)", "", ("dtype",)),
        ("empty-valid", f"{grp}", "sm.empty((4,), 'float32', _g)", "chk_tensor(r, (4,), 'float32')", ()),
        ("get-buffer-huge-offset", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (2,), 'float32', 2**62)", "", ("offset", "storage_offset")),
        ("get-buffer-neg-offset", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (2,), 'float32', -1)", "", ("offset", "storage_offset")),
        ("get-buffer-too-big", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (5,), 'float32')", "", ("shape", "size", "fit")),
        ("get-buffer-offset-overflow", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (2**62,), 'float32', 2**62)", "", ("offset", "shape", "fit")),
        ("get-buffer-neg-size", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (-1,), 'float32')", "", ("shape", "size")),
        ("get-buffer-bad-rank", f"{sym}", "sm.rendezvous(_x).get_buffer(5, (2,), 'float32')", "", ("rank",)),
        ("get-buffer-bad-dtype", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (2,), 'bogus')", "", ("dtype",)),
        ("get-buffer-valid", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (2,), 'float32', 1)", "chk_values(r, np.array([1.0, 2.0], np.float32))", ()),
        ("buffer-bad-rank", f"{sym}", "sm.rendezvous(_x).buffer(-1)", "", ("rank",)),
        ("wait-signal-bad-channel", f"{sym}", "sm.rendezvous(_x).wait_signal(0, 2**40)", "", ("channel",)),
        ("rendezvous-non-symmetric", f"{grp}", "sm.rendezvous(opreg.ones((4,)))", "", ("symmetric", "tensor")),
        ("allreduce-non-symmetric", f"{grp}", "sm.one_shot_all_reduce(opreg.ones((4,)), _g)", "", ("input",)),
        ("allreduce-bad-op", f"{sym}", "sm.one_shot_all_reduce(_x, _g, 'bogus')", "", ("reduce_op",)),
        ("allreduce-valid", f"{sym}", "sm.one_shot_all_reduce(_x, _g)", "chk_values(r, np.arange(4, dtype=np.float32))", ()),
        ("allreduce-out-readonly", f"{sym}", "sm.one_shot_all_reduce(_x, _g, out=ro(np.zeros(4, np.float32)))", "", ("out",)),
        ("allreduce-out-is-input", f"{sym}", "sm.one_shot_all_reduce(_x, _g, out=_x)", "chk_values(r, np.arange(4, dtype=np.float32))", ("out",)),
        ("allgather-out-wrong", f"{sym}", "sm.all_gather_into(np.zeros(3, np.float32), _x, _g)", "", ("out",)),
        ("reduce-scatter-valid", f"{sym}", "sm.reduce_scatter_into(np.zeros(4, np.float32), _x, _g)", "chk_values(r, np.arange(4, dtype=np.float32))", ()),
        ("two-shot-inplace", f"{sym}", "(sm.two_shot_all_reduce_(_x, _g), _x)[1]", "chk_values(r, np.arange(4, dtype=np.float32))", ()),
        ("fused-non-symmetric", f"{sym}", "sm.fused_all_reduce_add_rms_norm_(opreg.ones((4,)), np.ones(4, np.float32), np.ones(4, np.float32), 1e-6, _g)", "", ("input",)),
        ("destroy-twice", f"{grp}; sm.destroy_group(_g)", "sm.destroy_group(_g)", "", ("group",)),
        ("filestore-missing", "import opreg.symm_mem as sm", "sm.FileStore('/nonexistent/dir')", "'unchecked: accepted'", ("/nonexistent/dir",)),
    ]
    for pid, setup, call, expect, args in cases:
        must = "a read-only out" if pid == "allreduce-out-readonly" else ""
        g.add(Probe(id=f"symm_mem/{pid}", surface="symm_mem", setup=setup, call=call,
                    expect=expect or "'unchecked: accepted'", must_refuse=must,
                    key=pid in ("lone-rank-of-2", "get-buffer-huge-offset", "get-buffer-offset-overflow",
                                "allreduce-out-readonly", "empty-bytes-overflow"),
                    op_tokens=("symm_mem", "group", "create_group", "empty", "rendezvous", "get_buffer",
                               "buffer", "all_reduce", "all_gather", "reduce_scatter", "store", "rms_norm",
                               "wait_signal", "destroy"),
                    arg_tokens=args))
