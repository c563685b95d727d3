"""cudalite.cuda._memory_viz and the snapshot files: torch's readings of a snapshot (checked
against what torch returned for the same file, tests/gen_memory_viz_expected.py), the
active-memory timeline and its static SVG, and the command lines. Snapshots come from the
caching allocator over the host backend, so no GPU is needed."""

import base64
import json
import os
import pickle
import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import cudalite
from _alloc_helpers import CLASSIC, GiB, H, MiB, flat
from cudalite import _C
from cudalite.cuda import _memory_viz as mv
from cudalite.cuda import memory

DATA = os.path.join(os.path.dirname(__file__), "data")
HAS_GPU = _C._cuda.device_count() > 0


@pytest.fixture(scope="module")
def recorded():
    with open(os.path.join(DATA, "memory_viz_snapshot.pickle"), "rb") as f:
        snap = pickle.load(f)
    with open(os.path.join(DATA, "memory_viz_torch.json")) as f:
        torch_out = json.load(f)
    return snap, torch_out


def _cli(module, *args):
    pkg_parent = os.path.dirname(os.path.dirname(cudalite.__file__))
    env = dict(os.environ, PYTHONPATH=pkg_parent)
    return subprocess.run(
        [sys.executable, "-m", module, *args], env=env, capture_output=True, text=True, timeout=120
    )


# ---------------------------------------------------------------------------------------
# Allocation patterns recorded on the host backend. The helpers are named so that the
# timeline's legend can be checked to name them.


def make_weight(h, n):
    return h.alloc(n)


def make_activation(h, n):
    return h.alloc(n)


def training_history(h, steps=5, seed=0, align=1):
    """A few training steps: persistent weights, activations freed in reverse (some out
    of order), gradients; a bigger batch at one step."""
    rnd = random.Random(seed)

    def size(n):
        return -(-n // align) * align

    weights = [make_weight(h, size(rnd.randint(1, 8 * MiB))) for _ in range(4)]
    for step in range(steps):
        batch = 16 if step == 3 else 8
        acts = [make_activation(h, size(batch * rnd.randint(1, 1 << 20))) for _ in range(12)]
        acts[:3] = acts[2::-1]  # a few freed out of order
        grads = []
        for a in reversed(acts):
            grads.append(h.alloc(size(rnd.randint(1, MiB))))
            h.free(a)
            if len(grads) > 3:
                h.free(grads.pop(0))
        for g in grads:
            h.free(g)
    return weights


def live_peak(trace):
    """The largest number of bytes live at once, recomputed from alloc / free_completed."""
    live, cur, peak = {}, 0, 0
    for e in trace:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            cur += e["size"]
            peak = max(peak, cur)
        elif e["action"] == "free_completed":
            cur -= live.pop(e["addr"])
    return peak


def recorded_host(seed=0, align=1, steps=5):
    h = H(4 * GiB)
    h.record_memory_history("all", "all", "python", 1_000_000)
    weights = training_history(h, steps=steps, seed=seed, align=align)
    return h, weights


# ---------------------------------------------------------------------------------------
# Snapshot files.


def test_write_snapshot_uses_protocol_4(tmp_path):
    h, _ = recorded_host()
    path = tmp_path / "s.pickle"
    memory._write_snapshot(h.snapshot(), path)
    raw = path.read_bytes()
    assert raw[:2] == b"\x80\x04"
    snap = pickle.loads(raw)
    assert set(snap) == {"segments", "device_traces", "allocator_settings", "external_annotations"}


# The opcodes the viewer's JavaScript unpickler (torch/utils/viz/MemoryViz.js) reads; it
# refuses protocols other than 2 to 4 and integers of more than 8 bytes.
VIEWER_OPCODES = {
    "PROTO", "FRAME", "STOP", "MARK", "MEMOIZE", "BINPUT", "LONG_BINPUT", "BINGET",
    "LONG_BINGET", "EMPTY_DICT", "EMPTY_LIST", "EMPTY_TUPLE", "DICT", "LIST", "TUPLE",
    "TUPLE1", "TUPLE2", "TUPLE3", "APPEND", "APPENDS", "SETITEM", "SETITEMS", "NONE",
    "NEWTRUE", "NEWFALSE", "BININT", "BININT1", "BININT2", "LONG1", "BINFLOAT",
    "SHORT_BINUNICODE", "BINUNICODE",
}  # fmt: skip


def test_snapshot_file_uses_only_what_the_viewer_reads(tmp_path):
    import pickletools

    h = H(64 * MiB)
    h.record_memory_history("all", "all", "python", 1000)
    p = make_activation(h, 40 * MiB)
    with pytest.raises(_C.OutOfMemoryError):
        h.alloc(50 * MiB)
    memory._write_snapshot(h.snapshot(), tmp_path / "s.pickle")
    raw = (tmp_path / "s.pickle").read_bytes()
    ops = list(pickletools.genops(raw))
    assert {op.name for op, _, _ in ops} <= VIEWER_OPCODES
    assert ops[0][1] == 4  # PROTO 4
    longs = [arg for op, arg, _ in ops if op.name == "LONG1"]
    assert longs and all(-(2**63) <= v < 2**63 for v in longs)  # 8 bytes at most
    h.free(p)


def test_dump_snapshot_writes_protocol_4(tmp_path):
    path = tmp_path / "dump.pickle"
    if HAS_GPU:
        memory._record_memory_history(max_entries=1000)
        x = cudalite.empty(1 << 20, device="cuda")
    try:
        memory._dump_snapshot(str(path))
    finally:
        if HAS_GPU:
            memory._record_memory_history(None)
    raw = path.read_bytes()
    assert raw[:2] == b"\x80\x04"
    snap = pickle.loads(raw)
    assert set(snap) >= {"segments", "device_traces"}
    if HAS_GPU:
        dev = cudalite.cuda.current_device()
        assert any(e["action"] == "alloc" for e in snap["device_traces"][dev])
        # the snapshot holds every GPU's segments (earlier tests may have used another one)
        mine = [s for s in snap["segments"] if s["device"] == dev]
        assert sum(s["total_size"] for s in mine) == memory.memory_reserved()
        del x


# ---------------------------------------------------------------------------------------
# torch's readings, compared with what torch returned for the same snapshot.


def test_segsum_and_trace_equal_torchs(recorded):
    snap, torch_out = recorded
    assert mv.segsum(snap) == torch_out["segsum"]
    assert mv.trace(snap) == torch_out["trace"]
    assert "raise OutOfMemoryError # 1.0GiB requested" in mv.trace(snap)


def test_flamegraph_lines_equal_torchs(recorded):
    snap, torch_out = recorded

    def folded(lines):
        return lines

    assert mv.segments(snap, format_flamegraph=folded) == torch_out["segments"]
    assert mv.memory(snap, format_flamegraph=folded) == torch_out["memory"]


def test_viewer_pages_equal_torchs(recorded):
    snap, torch_out = recorded
    assert mv.trace_plot(snap) == torch_out["trace_plot"]
    assert mv.trace_plot(snap, plot_segments=True) == torch_out["trace_plot_segments"]
    assert mv.segment_plot(snap) == torch_out["segment_plot"]


def test_viewer_page_embeds_a_protocol_4_pickle(recorded):
    snap, _ = recorded
    html = mv.trace_plot(snap)
    (encoded,) = re.findall(r'"base64": "([^"]+)"', html)
    raw = base64.b64decode(encoded)
    assert raw[:2] == b"\x80\x04"
    assert pickle.loads(raw.rstrip(b"\x00")) == snap


def test_viewer_device_argument_is_deprecated(recorded):
    snap, _ = recorded
    with pytest.warns(FutureWarning, match="device argument is deprecated"):
        mv.trace_plot(snap, device=0)
    with pytest.warns(FutureWarning, match="device argument is deprecated"):
        mv.segment_plot(snap, device=0)


def test_compare_lists_segments_only_on_one_side(capsys):
    h = H(GiB, CLASSIC)
    a = h.alloc(30 * MiB)
    before = h.snapshot()["segments"]
    b = h.alloc(50 * MiB)
    after = h.snapshot()["segments"]
    lines = mv.compare(before, after, format_flamegraph=lambda x: x)
    printed = capsys.readouterr().out
    assert "only_before = []" in printed
    assert "only_after = [" in printed
    new = [s for s in after if (s["address"], s["total_size"]) not in
           {(x["address"], x["total_size"]) for x in before}]  # fmt: skip
    assert new and all(f"only_after;stream_0;seg_{s['address']}" in lines for s in new)
    assert "only_before" not in lines
    h.free(a)
    h.free(b)


def test_filter_alloc_free_pairs_keeps_what_is_still_allocated():
    h = H(GiB)
    h.record_memory_history("all", None, "python", 1000)
    keep = h.alloc(3 * MiB)
    h.free(h.alloc(5 * MiB))
    snap = mv.filter_alloc_free_pairs(h.snapshot())
    allocs = [e for e in snap["device_traces"][0] if e["action"] == "alloc"]
    assert [(e["addr"], e["size"]) for e in allocs] == [(keep, 3 * MiB)]
    assert not any(e["action"].startswith("free") for e in snap["device_traces"][0])
    h.free(keep)


def test_format_flamegraph_runs_the_script(tmp_path):
    script = tmp_path / "flamegraph.pl"
    script.write_text('#!/bin/sh\necho "<svg>$1 $2"\ncat\n')
    script.chmod(0o755)
    out = mv.format_flamegraph("a;b 3\n", flamegraph_script=str(script))
    assert out == "<svg>--countname bytes\na;b 3\n"
    missing = tmp_path / "nope.pl"
    with pytest.raises(FileNotFoundError, match="flamegraph.pl was not found"):
        mv.format_flamegraph("a 1\n", flamegraph_script=str(missing))
    failing = tmp_path / "fail.pl"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    with pytest.raises(RuntimeError, match="exited with code 3"):
        mv.format_flamegraph("a 1\n", flamegraph_script=str(failing))


# ---------------------------------------------------------------------------------------
# The timeline.


@pytest.mark.parametrize("seed", range(4))
def test_timeline_peak_is_the_allocators_peak(seed):
    # Sizes of whole 512-byte units: requested and allocated bytes agree, so the stack's
    # peak equals both of the allocator's peaks exactly.
    h, weights = recorded_host(seed=seed, align=512)
    snap = h.snapshot()
    tl = mv.timeline(snap)
    stats = flat(h)
    assert tl.peak_bytes == live_peak(snap["device_traces"][0])
    assert tl.peak_bytes == stats["allocated_bytes.all.peak"]
    assert tl.peak_bytes == stats["requested_bytes.all.peak"]
    assert max(tl.totals) == tl.peak_bytes
    assert tl.totals[tl.peak_step - 1] == tl.peak_bytes
    # The drawn bands reach exactly that high, and no higher.
    top = 0
    for band in tl.bands:
        if band["elem"] != "summarized":
            top = max(top, max(o + band["size"] for o in band["offsets"]))
    assert top == tl.peak_bytes
    for w in weights:
        h.free(w)


def test_timeline_peak_counts_requested_bytes():
    h, weights = recorded_host(seed=7)
    snap = h.snapshot()
    tl = mv.timeline(snap)
    assert tl.peak_bytes == flat(h)["requested_bytes.all.peak"]
    assert tl.peak_bytes == live_peak(snap["device_traces"][0])
    for w in weights:
        h.free(w)


def test_timeline_reserved_line_follows_segments():
    h, weights = recorded_host(seed=1)
    for w in weights[:2]:
        h.free(w)
    h.empty_cache()
    snap = h.snapshot()
    tl = mv.timeline(snap)
    stats = flat(h)
    assert tl.reserved[0] == (0, 0)
    assert tl.reserved[-1][1] == stats["reserved_bytes.all.current"]
    assert max(r for _, r in tl.reserved) == stats["reserved_bytes.all.peak"]
    steps = [t for t, _ in tl.reserved]
    assert steps == sorted(steps) and steps[-1] == tl.steps
    for w in weights[2:]:
        h.free(w)


def test_timeline_stacks_as_torchs_viewer():
    h = H(GiB)
    h.record_memory_history("all", None, "python", 1000)
    a = h.alloc(2 * MiB)
    b = h.alloc(3 * MiB)
    c = h.alloc(5 * MiB)
    h.free(b)  # c slides down by b's size over three steps
    h.free(c)
    h.free(a)
    tl = mv.timeline(h.snapshot())
    bands = {tl.elements[band["elem"]]["addr"]: band for band in tl.bands[:-1]}
    assert bands[a]["timesteps"] == [0, 9] and bands[a]["offsets"] == [0, 0]
    assert bands[b]["timesteps"] == [1, 4] and bands[b]["offsets"] == [2 * MiB, 2 * MiB]
    assert bands[c]["timesteps"] == [2, 4, 7, 8]
    assert bands[c]["offsets"] == [5 * MiB, 5 * MiB, 2 * MiB, 2 * MiB]
    assert tl.steps == 9 and tl.peak_bytes == 10 * MiB and tl.peak_step == 3
    assert tl.bands[-1]["elem"] == "summarized"


def release_it(h, p):
    h.free(p)


def test_legend_names_the_free_of_an_allocation_made_before_recording():
    h = H(GiB)
    p = h.alloc(8 * MiB)
    h.record_memory_history("all", "all", "python", 1000)  # frees keep their stacks too
    release_it(h, p)
    svg = mv.static_plot(h.snapshot())
    this = os.path.basename(__file__)
    where = rf"freed at {re.escape(this)}:\d+:release_it"
    assert re.search(rf"8\.0MiB  alloc not recorded; {where}", svg)


def test_legend_marks_summarized_allocations_grey():
    h, weights = recorded_host(seed=2)
    tl = mv.timeline(h.snapshot(), max_entries=3)
    rows = [r for r in mv._legend_rows(tl, 10) if r[3] is not None and r[2] != "skip"]
    assert rows
    for color, _, _, elem in rows:
        assert (color == mv._SUMMARY_COLOR) == (elem not in tl.drawn)
    assert any(elem not in tl.drawn for *_, elem in rows)
    for w in weights:
        h.free(w)


def test_timeline_summarizes_beyond_max_entries():
    h, weights = recorded_host(seed=2)
    snap = h.snapshot()
    full = mv.timeline(snap)
    cut = mv.timeline(snap, max_entries=5)
    assert len(cut.bands) == 5 + 1
    assert cut.peak_bytes == full.peak_bytes
    assert cut.totals == full.totals[: len(cut.totals)] or len(cut.totals) < len(full.totals)
    assert max(cut.bands[-1]["size"]) > 0
    drawn = sorted((cut.elements[b["elem"]]["size"] for b in cut.bands[:-1]), reverse=True)
    assert drawn == sorted((e["size"] for e in cut.elements), reverse=True)[:5]
    for w in weights:
        h.free(w)


def test_timeline_history_cut_short_starts_with_the_live_blocks():
    # A ring buffer of 6 entries keeps only the end: the blocks allocated before it (and
    # those whose alloc fell out of it) are drawn from the start, at the bottom.
    h = H(GiB)
    h.record_memory_history("all", None, "python", 6)
    old = [h.alloc(n * MiB) for n in (4, 6)]
    freed_later = h.alloc(2 * MiB)
    for _ in range(3):
        h.free(h.alloc(512))
    h.free(freed_later)
    snap = h.snapshot()
    trace = snap["device_traces"][0]
    assert not any(e["action"] == "alloc" and e["addr"] in old for e in trace)
    tl = mv.timeline(snap)
    assert sorted(tl.elements[i]["addr"] for i in tl.initial) == sorted(old + [freed_later])
    bottom = [b for b in tl.bands[:-1] if b["elem"] in tl.initial]
    assert all(b["timesteps"][0] == 0 for b in bottom)
    assert sorted(b["offsets"][0] for b in bottom) == [0, 6 * MiB, 10 * MiB]
    assert tl.totals[0] >= 12 * MiB
    assert tl.peak_bytes == 12 * MiB + 512
    freed = [e for e in tl.elements if e["action"] == "free_completed"]
    assert [e["addr"] for e in freed] == [freed_later]
    svg = mv.static_plot(snap)
    assert "6.0MiB  allocated before recording started" in svg  # alive in the segments
    assert "2.0MiB  allocated before recording started" in svg  # known from its free
    for p in old:
        h.free(p)


def test_timeline_without_history_draws_the_live_blocks():
    h = H(GiB)
    p = h.alloc(3 * MiB)
    q = h.alloc(5 * MiB)
    tl = mv.timeline(h.snapshot())
    assert tl.peak_bytes == 8 * MiB
    assert len(tl.bands) == 3
    h.free(p)
    h.free(q)


def test_timeline_marks_out_of_memory():
    h = H(64 * MiB)
    h.record_memory_history("all", None, "python", 1000)
    p = h.alloc(40 * MiB)
    with pytest.raises(_C.OutOfMemoryError):
        h.alloc(50 * MiB)
    tl = mv.timeline(h.snapshot())
    ((step, requested, free),) = tl.ooms
    assert step == 1 and requested == 50 * MiB and free >= 0
    svg = mv.static_plot(h.snapshot())
    assert svg.count("data-oom='1'") == 1
    assert "out of memory at step 1: 50.0MiB requested" in svg
    h.free(p)


def test_timeline_device_choice():
    h, weights = recorded_host(seed=3)
    snap = h.snapshot()
    two = dict(snap, device_traces=[snap["device_traces"][0], snap["device_traces"][0]])
    with pytest.raises(ValueError, match=r"histories for devices \[0, 1\]; pass device="):
        mv.timeline(two)
    assert mv.timeline(two, device=1).peak_bytes == mv.timeline(snap).peak_bytes
    assert mv.timeline(snap, device=cudalite.device("cuda", 0)).device == 0
    empty = mv.timeline(snap, device=5)
    assert empty.peak_bytes == 0 and empty.steps == 0
    with pytest.raises(ValueError, match="max_entries must be non-negative"):
        mv.timeline(snap, max_entries=-1)
    for w in weights:
        h.free(w)


# ---------------------------------------------------------------------------------------
# The SVG.


def _parse(svg):
    return ET.fromstring(svg)


def test_static_plot_is_self_contained_svg():
    h, weights = recorded_host(seed=4, align=512)
    snap = h.snapshot()
    svg = mv.static_plot(snap)
    root = _parse(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == ns + "svg"
    assert "<script" not in svg and "http://" not in svg.replace("http://www.w3.org/2000/svg", "")
    tl = mv.timeline(snap)
    polygons = root.iter(ns + "polygon")
    assert sum(1 for _ in polygons) == min(len(tl.elements), 15000) + (
        1 if any(tl.bands[-1]["size"]) else 0
    )
    assert int(root.get("data-peak-bytes")) == flat(h)["allocated_bytes.all.peak"]
    assert f"({tl.peak_bytes} bytes)" in svg
    assert root.iter(ns + "polyline")  # the reserved line
    for w in weights:
        h.free(w)


def test_static_plot_polygons_stay_inside_the_plot():
    h, weights = recorded_host(seed=5)
    svg = mv.static_plot(h.snapshot(), width=400, height=200)
    root = _parse(svg)
    ns = "{http://www.w3.org/2000/svg}"
    (group,) = [g for g in root.iter(ns + "g") if g.get("data-bands")]
    left, head = 84, 56
    for poly in group.iter(ns + "polygon"):
        nums = [int(v) for v in re.split(r"[ ,]+", poly.get("points").strip())]
        xs, ys = nums[0::2], nums[1::2]
        assert min(xs) >= left * 10 and max(xs) <= (left + 400) * 10
        assert min(ys) >= head * 10 - 1 and max(ys) <= (head + 200) * 10
    # The highest point drawn is the peak (the y axis ends at a round tick above it).
    top = min(
        int(v)
        for poly in group.iter(ns + "polygon")
        for v in re.split(r"[ ,]+", poly.get("points").strip())[1::2]
    )
    tl = mv.timeline(h.snapshot())
    ticks, _, _ = mv._byte_ticks(max(tl.peak_bytes, max(r for _, r in tl.reserved)))
    expected = round((head + 200 - tl.peak_bytes * 200 / ticks[-1]) * 10)
    assert top == expected
    for w in weights:
        h.free(w)


def test_static_plot_writes_at_most_two_points_per_pixel_column_and_edge():
    h, weights = recorded_host(seed=10, steps=12)
    width = 64  # far fewer pixels than steps
    tl = mv.timeline(h.snapshot())
    assert tl.steps > 10 * width
    # Some bands have more points than that bound before they are written.
    assert max(2 * len(b["timesteps"]) for b in tl.bands) > 4 * (width + 1)
    root = _parse(mv.static_plot(h.snapshot(), width=width))
    ns = "{http://www.w3.org/2000/svg}"
    (group,) = [g for g in root.iter(ns + "g") if g.get("data-bands")]
    for poly in group.iter(ns + "polygon"):
        xs = [int(v) for v in re.split(r"[ ,]+", poly.get("points").strip())[0::2]]
        assert len(xs) <= 2 * 2 * (width + 1)  # both edges, first and last of each column
    for w in weights:
        h.free(w)


def test_static_plot_names_allocations_by_user_frame():
    h, weights = recorded_host(seed=6)
    svg = mv.static_plot(h.snapshot())
    this = os.path.basename(__file__)
    assert re.search(rf"1\. [0-9.]+[KMG]iB(?: each)?  {re.escape(this)}:\d+:make_", svg)
    assert "Memory alive at the peak by where it was allocated" in svg
    assert f"{this}:" in svg and ":make_weight" in svg
    for w in weights:
        h.free(w)


def test_user_frame_skips_library_frames():
    pkg = os.path.dirname(cudalite.__file__)
    frames = [
        {"filename": os.path.join(pkg, "_tensor.py"), "line": 3, "name": "empty"},
        {"filename": "Objects/call.c", "line": 1, "name": "PyObject_Call"},
        {"filename": "/home/u/train.py", "line": 12, "name": "forward"},
    ]
    assert mv._user_frame(frames)["name"] == "forward"
    assert mv._user_frame(frames[:1])["name"] == "empty"  # nothing else: the first one
    assert mv._user_frame([]) is None
    comprehension = [
        {"filename": "/home/u/train.py", "line": 7, "name": "<listcomp>"},
        {"filename": "/home/u/train.py", "line": 7, "name": "make_weights"},
        {"filename": "/home/u/train.py", "line": 30, "name": "main"},
    ]
    assert mv._user_frame(comprehension)["name"] == "make_weights"
    assert mv._user_frame(comprehension[:1])["name"] == "<listcomp>"


def test_static_plot_argument_errors():
    h = H(GiB)
    snap = h.snapshot()
    with pytest.raises(ValueError, match="at least 64x64 pixels"):
        mv.static_plot(snap, width=10)
    with pytest.raises(TypeError, match="snapshot must be a snapshot dict, a file path or None"):
        memory.plot_timeline("x.svg", snapshot=42)


def test_static_plot_of_an_empty_snapshot():
    h = H(GiB)
    svg = mv.static_plot(h.snapshot())
    root = _parse(svg)
    assert root.get("data-peak-bytes") == "0"


def test_plot_timeline_from_dict_and_file(tmp_path):
    h, weights = recorded_host(seed=8)
    snap = h.snapshot()
    memory._write_snapshot(snap, tmp_path / "s.pickle")
    memory.plot_timeline(tmp_path / "a.svg", snap)
    memory.plot_timeline(str(tmp_path / "b.svg"), str(tmp_path / "s.pickle"), top=3)
    memory.plot_timeline(tmp_path / "c.svg", tmp_path / "s.pickle")
    a = (tmp_path / "a.svg").read_text()
    assert a == (tmp_path / "c.svg").read_text()
    assert a != (tmp_path / "b.svg").read_text()  # fewer named allocations
    _parse(a)
    memory.plot_timeline(tmp_path / "d.svg")  # this process's snapshot, now
    _parse((tmp_path / "d.svg").read_text())
    for w in weights:
        h.free(w)


def test_plot_timeline_from_torch_snapshot(recorded, tmp_path):
    # The pickle torch's functions read; plot_timeline reads it as well.
    snap, _ = recorded
    memory.plot_timeline(tmp_path / "t.svg", os.path.join(DATA, "memory_viz_snapshot.pickle"))
    root = _parse((tmp_path / "t.svg").read_text())
    assert int(root.get("data-peak-bytes")) == live_peak(snap["device_traces"][0])


# ---------------------------------------------------------------------------------------
# Command lines.


def test_memory_module_plot_command(tmp_path):
    h, weights = recorded_host(seed=9)
    memory._write_snapshot(h.snapshot(), tmp_path / "s.pickle")
    out = tmp_path / "timeline.svg"
    r = _cli("cudalite.cuda.memory", "plot", str(tmp_path / "s.pickle"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # no runpy warning about the module imported twice
    assert r.stdout == f"wrote {out}\n"
    assert (
        int(_parse(out.read_text()).get("data-peak-bytes")) == flat(h)["requested_bytes.all.peak"]
    )
    for w in weights:
        h.free(w)


def test_memory_viz_commands(recorded, tmp_path):
    _, torch_out = recorded
    pickle_path = os.path.join(DATA, "memory_viz_snapshot.pickle")
    r = _cli("cudalite.cuda._memory_viz", "stats", pickle_path)
    assert r.returncode == 0 and r.stdout == torch_out["segsum"] + "\n"
    r = _cli("cudalite.cuda._memory_viz", "trace", pickle_path)
    assert r.returncode == 0 and r.stdout == torch_out["trace"] + "\n"
    html = tmp_path / "t.html"
    r = _cli("cudalite.cuda._memory_viz", "trace_plot", pickle_path, "-o", str(html))
    assert r.returncode == 0 and html.read_text() == torch_out["trace_plot"]
    r = _cli("cudalite.cuda._memory_viz", "segment_plot", pickle_path, "-o", str(html))
    assert r.returncode == 0 and html.read_text() == torch_out["segment_plot"]
    svg = tmp_path / "t.svg"
    r = _cli("cudalite.cuda._memory_viz", "plot", pickle_path, "-o", str(svg), "--no-reserved")
    assert r.returncode == 0 and "reserved bytes" not in svg.read_text()
    r = _cli("cudalite.cuda._memory_viz", "nonsense")
    assert r.returncode == 2 and "invalid choice" in r.stderr
    r = _cli("cudalite.cuda.memory")  # no sub-command
    assert r.returncode == 2 and r.stderr.startswith("usage: python -m cudalite.cuda.memory ")


# ---------------------------------------------------------------------------------------
# On a GPU: a GPT training run recorded, dumped and drawn.

requires_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU")


@requires_gpu
def test_gpt_training_snapshot_plots_its_peak(tmp_path):
    from test_nn_gpt import GPT, GPTConfig, batch

    cudalite.manual_seed(0)
    config = GPTConfig(block_size=64, vocab_size=65, n_layer=2, n_head=4, n_embd=128)
    model = GPT(config).cuda()
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
    cudalite.cuda.synchronize()
    memory.reset_peak_memory_stats()
    memory._record_memory_history(max_entries=100_000)
    path = tmp_path / "gpt.pickle"
    try:
        for step in range(4):
            x, y = batch(config, seed=step)
            if step == 3:  # a smaller last batch
                x, y = x[:2], y[:2]
            _, loss = model(x.cuda(), y.cuda())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        cudalite.cuda.synchronize()
        memory._dump_snapshot(str(path))
    finally:
        memory._record_memory_history(None)
    assert path.read_bytes()[:2] == b"\x80\x04"
    snap = pickle.loads(path.read_bytes())
    # Earlier tests may have left histories on other GPUs: plot this one's.
    dev = cudalite.cuda.current_device()
    tl = mv.timeline(snap, device=dev)
    # The stack counts requested bytes; its peak is the allocator's requested peak.
    assert tl.peak_bytes == memory.memory_stats()["requested_bytes.all.peak"]
    memory.plot_timeline(tmp_path / "gpt.svg", str(path), device=dev)
    root = _parse((tmp_path / "gpt.svg").read_text())
    assert int(root.get("data-peak-bytes")) == tl.peak_bytes
    assert tl.reserved[-1][1] == memory.memory_reserved()
    # Named by the model code that allocated them, not by cudalite's own frames.
    assert "test_nn_gpt.py:" in (tmp_path / "gpt.svg").read_text()
