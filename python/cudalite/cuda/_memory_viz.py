r"""Reading and drawing memory snapshots (``cudalite.cuda.memory._snapshot()``).

The functions of ``torch.cuda._memory_viz`` with the same names, arguments and output
(``segsum``, ``trace``, ``segments``, ``memory``, ``compare``, ``trace_plot``,
``segment_plot``), and beyond torch a self-contained static picture: :func:`static_plot`
draws the active-memory timeline of a snapshot's history as an SVG that needs no script and no
network, with the reserved-bytes line, out-of-memory markers and the largest allocations alive
at the peak named by the first frame of user code that made them.

Command line (torch's sub-commands, plus ``plot``)::

    python -m cudalite.cuda._memory_viz stats snapshot.pickle
    python -m cudalite.cuda._memory_viz plot snapshot.pickle -o timeline.svg
"""

from __future__ import annotations

import io
import os
import sys
import warnings

__all__ = [
    "format_flamegraph",
    "segments",
    "memory",
    "compare",
    "segsum",
    "trace",
    "trace_plot",
    "segment_plot",
    "filter_alloc_free_pairs",
    "static_plot",
    "timeline",
    "Timeline",
]

# ---------------------------------------------------------------------------------------
# Frames.

_OMIT_NAMES = (
    "unwind::unwind",
    "CapturedTraceback::gather",
    "gather_with_cpp",
    "_start",
    "__libc_start_main",
    "PyEval_",
    "PyObject_",
    "PyFunction_",
)
_OMIT_FILES = (
    "core/boxing",
    "/Register",
    "/Redispatch",
    "pythonrun.c",
    "Modules/main.c",
    "Objects/call.c",
    "Objects/methodobject.c",
    "pycore_ceval.h",
    "ceval.c",
    "cpython/abstract.h",
)


def _frame_filter(name: str, filename: str) -> bool:
    """False for the interpreter's and dispatcher's own frames (the ones torch's viewer hides)."""
    return not any(o in name for o in _OMIT_NAMES) and not any(o in filename for o in _OMIT_FILES)


def _frame_fmt(f, full_filename=False) -> str:
    filename = f["filename"] if full_filename else f["filename"].rsplit("/", 1)[-1]
    return f"{filename}:{f['line']}:{f['name']}"


def _frames_fmt(frames, full_filename=False, reverse=False):
    seq = reversed(frames) if reverse else frames
    return [_frame_fmt(f, full_filename) for f in seq if _frame_filter(f["name"], f["filename"])]


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARY_MARKERS = (os.sep + "torch" + os.sep, os.sep + "importlib" + os.sep, "<frozen ")


def _user_frame(frames):
    """The innermost frame of the program itself: not cudalite's (nor torch's) own code and
    not the interpreter's. None when no frame qualifies."""
    fallback = None
    for i, f in enumerate(frames):
        name, filename = f["name"], f["filename"]
        if not _frame_filter(name, filename):
            continue
        if fallback is None:
            fallback = f
        if filename.startswith(_PACKAGE_DIR) or any(m in filename for m in _LIBRARY_MARKERS):
            continue
        # A comprehension is named by the function it is written in.
        while name in _COMPREHENSIONS and i + 1 < len(frames):
            if frames[i + 1]["filename"] != filename:
                break
            i += 1
            f, name = frames[i], frames[i]["name"]
        return f
    return fallback


_COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def _block_extra(b):
    """(frames, requested bytes) of a snapshot block, in the current or the older layout."""
    if "frames" in b:
        return b["frames"], b["requested_size"]
    if "history" in b:
        first = b["history"][0]
        return first.get("frames", []), first["real_size"]
    return [], b.get("requested_size", b["size"])


# ---------------------------------------------------------------------------------------
# Sizes.


def _format_size(num) -> str:
    for unit in ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi"):
        if abs(num) < 1024.0:
            return f"{num:3.1f}{unit}B"
        num /= 1024.0
    return f"{num:.1f}YiB"


class Bytes:
    """A byte count that prints with binary units (``Bytes(1536)`` prints ``1.5KiB``)."""

    def __init__(self, value):
        self.value = value

    def __add__(self, rhs):
        return Bytes(self.value + rhs)

    def __repr__(self):
        return _format_size(self.value)


def calc_active(seg) -> int:
    """Bytes of a segment's blocks that are allocated."""
    return sum(b["size"] for b in seg["blocks"] if b["state"] == "active_allocated")


# ---------------------------------------------------------------------------------------
# Flame graphs (need Brendan Gregg's flamegraph.pl).


def format_flamegraph(flamegraph_lines, flamegraph_script=None):
    """Turn folded stack lines into a flame-graph SVG with ``flamegraph.pl``.

    The script is looked up as given, then as ``~/.cache/flamegraph.pl``, then on ``PATH``.
    Unlike torch this never downloads it: get it from the FlameGraph project and put it in
    one of those places.
    """
    import shutil
    import subprocess

    if flamegraph_script is None:
        cached = os.path.expanduser("~/.cache/flamegraph.pl")
        flamegraph_script = cached if os.path.exists(cached) else shutil.which("flamegraph.pl")
    if flamegraph_script is None or not os.path.exists(flamegraph_script):
        raise FileNotFoundError(
            "flamegraph.pl was not found (looked in ~/.cache/flamegraph.pl and on PATH); "
            "download it from https://github.com/brendangregg/FlameGraph or pass "
            "flamegraph_script="
        )
    result = subprocess.run(
        [flamegraph_script, "--countname", "bytes"],
        input=flamegraph_lines,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"flamegraph process exited with code {result.returncode}")
    return result.stdout


def _write_blocks(out, prefix, blocks):
    def folded(frames):
        return ";".join(_frames_fmt(frames, reverse=True)) if frames else "<non-python>"

    for b in blocks:
        state = b["state"]
        if "history" in b:
            accounted = 0
            for h in b["history"]:
                accounted += h["real_size"]
                where = folded(h["frames"]) if "frames" in h else "<no-context>"
                out.write(f"{prefix};{state};{where} {h['real_size']}\n")
        else:
            frames, accounted = _block_extra(b)
            out.write(f"{prefix};{state};{folded(frames)} {accounted}\n")
        if b["size"] != accounted:
            out.write(f"{prefix};{state};<gaps> {b['size'] - accounted}\n")


def _segments_folded(snapshot) -> str:
    out = io.StringIO()
    for seg in snapshot["segments"]:
        _write_blocks(out, f"stream_{seg['stream']};seg_{seg['address']}", seg["blocks"])
    return out.getvalue()


def _memory_folded(snapshot) -> str:
    out = io.StringIO()
    for seg in snapshot["segments"]:
        _write_blocks(out, f"stream_{seg['stream']}", seg["blocks"])
    return out.getvalue()


def _compare_folded(before, after) -> str:
    def key(seg):
        return seg["address"], seg["total_size"]

    keys_before = {key(s) for s in before}
    keys_after = {key(s) for s in after}
    print(f"only_before = {[a for a, _ in (keys_before - keys_after)]}")
    print(f"only_after = {[a for a, _ in (keys_after - keys_before)]}")
    out = io.StringIO()
    for tag, segs, other in (
        ("only_before", before, keys_after),
        ("only_after", after, keys_before),
    ):
        for seg in segs:
            if key(seg) not in other:
                where = f"stream_{seg['stream']};seg_{seg['address']}"
                _write_blocks(out, f"{tag};{where}", seg["blocks"])
    return out.getvalue()


def segments(snapshot, format_flamegraph=format_flamegraph):
    """A flame graph of what each segment holds (by stream, segment, block state and stack)."""
    return format_flamegraph(_segments_folded(snapshot))


def memory(snapshot, format_flamegraph=format_flamegraph):
    """A flame graph of the program locations that hold memory (by stream and stack)."""
    return format_flamegraph(_memory_folded(snapshot))


def compare(before, after, format_flamegraph=format_flamegraph):
    """A flame graph of the segments only in ``before`` or only in ``after`` (two lists of
    segments, as ``snapshot["segments"]``)."""
    return format_flamegraph(_compare_folded(before, after))


# ---------------------------------------------------------------------------------------
# Text reports.

PAGE_SIZE = 20 * 1024 * 1024
legend = f"""\

Legend:
    [a     ] - a segment in the allocator
     ^-- a page {Bytes(PAGE_SIZE)} of memory in the segment
    a-z: pages filled with a single block's content
    ' ': page is completely free
    *: page if completely full with multiple blocks
    0-9: page is partially full with tensors of multiple blocks (9 == 90% full)
    (X% internal) - of the free memory, X% is free because we rounded the size of the allocation.
"""


def _report_free(external, internal) -> str:
    total = external + internal
    if total == 0:
        return f"{Bytes(total)}"
    return f"{Bytes(total)} ({internal / total * 100:.1f}% internal)"


def _segment_picture(seg, ranges) -> str:
    npages = (seg["total_size"] - 1) // PAGE_SIZE + 1
    chars = [" "] * npages
    filled = [0.0] * npages
    for i, (start, size) in enumerate(ranges):
        end = start + size
        letter = chr(ord("a") + i % 26)
        for page in range(start // PAGE_SIZE, (end - 1) // PAGE_SIZE + 1):
            lo, hi = max(start, page * PAGE_SIZE), min(end, (page + 1) * PAGE_SIZE)
            filled[page] += (hi - lo) / PAGE_SIZE
            chars[page] = letter if chars[page] == " " else "0123456789*"[int(filled[page] * 10)]
    return "".join(chars)


def segsum(data) -> str:
    r"""How the allocator has filled its segments, one line per segment of at least 20 MiB
    (gaps are free memory), with the totals: torch's ``_memory_viz stats`` report.

    Free memory is split into internal (the allocator rounded the request up) and external
    (gaps between blocks)."""
    out = io.StringIO()
    out.write(f"Summary of segments >= {Bytes(PAGE_SIZE)} in size\n")
    reserved = allocated = external = internal = 0
    for seg in sorted(data["segments"], key=lambda s: (s["total_size"], calc_active(s))):
        reserved += seg["total_size"]
        seg_external = seg_internal = seg_allocated = 0
        ranges = []
        offset = 0
        for b in seg["blocks"]:
            if b["state"] == "active_allocated":
                _, used = _block_extra(b)
                ranges.append((offset, used))
                seg_allocated += used
                seg_internal += b["size"] - used
            else:
                seg_external += b["size"]
            offset += b["size"]
        if seg_external + seg_internal + seg_allocated != seg["total_size"]:
            raise AssertionError(
                f"Segment size mismatch: {seg_external} + {seg_internal} + {seg_allocated} "
                f"!= {seg['total_size']}"
            )
        allocated += seg_allocated
        external += seg_external
        internal += seg_internal
        if seg["total_size"] >= PAGE_SIZE:
            stream = f" stream_{seg['stream']}" if seg["stream"] != 0 else ""
            out.write(
                f"[{_segment_picture(seg, ranges)}] {Bytes(seg['total_size'])} allocated, "
                f"{_report_free(seg_external, seg_internal)} free{stream}\n"
            )
    out.write(f"segments: {len(data['segments'])}\n")
    out.write(f"total_reserved: {Bytes(reserved)}\n")
    out.write(f"total_allocated: {Bytes(allocated)}\n")
    out.write(f"total_free: {_report_free(external, internal)}\n")
    out.write(legend)
    if internal + external + allocated != reserved:
        raise AssertionError(
            f"Memory accounting error: {internal} + {external} + {allocated} != {reserved}"
        )
    return out.getvalue()


def _trace_text(data, entries, out) -> None:
    seg_ranges = []  # (name, address, size) of segments allocated in the trace
    seg_names: dict = {}
    alloc_names: dict = {}
    spare: list = []
    counter = [0]

    def new_name():
        if spare:
            return spare.pop()
        n = counter[0]
        counter[0] += 1
        return chr(ord("a") + n % 26) + (str(n // 26) if n >= 26 else "")

    def locate(addr):
        for name, base, size in seg_ranges:
            if base <= addr < base + size:
                return name, base
        for i, seg in enumerate(data["segments"]):
            if seg["address"] <= addr < seg["address"] + seg["allocated_size"]:
                return f"seg_{i}", seg["address"]
        return None, None

    out.write(f"{len(entries)} entries\n")
    # torch's report counts the last event's index plus the bytes still live; kept as is.
    total = 0
    for total, e in enumerate(entries):
        action = e["action"]
        if action == "alloc":
            addr, size = e["addr"], e["size"]
            name = new_name()
            seg_name, base = locate(addr)
            where = f"{seg_name}[{addr - base}" if seg_name else f"MEM[{addr}"
            out.write(f"{name} = {where}:{Bytes(size)}]\n")
            alloc_names[addr] = name
            total += size
        elif action == "free_requested":
            out.write(f"del {alloc_names.get(e['addr'], e['addr'])} # {Bytes(e['size'])}\n")
        elif action == "free_completed":
            total -= e["size"]
            name = alloc_names.get(e["addr"], e["addr"])
            out.write(f"# free completed for {name} {Bytes(e['size'])}\n")
            if name in alloc_names:
                spare.append(name)
                del alloc_names[name]
        elif action == "segment_alloc":
            name = new_name()
            out.write(f"{name} = cudaMalloc({e['addr']}, {Bytes(e['size'])})\n")
            seg_ranges.append((name, e["addr"], e["size"]))
            seg_names[e["addr"]] = name
        elif action == "segment_free":
            name = seg_names.get(e["addr"], e["addr"])
            out.write(f"cudaFree({name}) # {Bytes(e['size'])}\n")
            if name in seg_names:
                spare.append(name)
                del seg_names[name]
        elif action == "oom":
            out.write(
                f"raise OutOfMemoryError # {Bytes(e['size'])} requested, "
                f"{Bytes(e['device_free'])} free in CUDA\n"
            )
        else:
            out.write(f"{e}\n")
    out.write(f"TOTAL MEM: {Bytes(total)}")


def trace(data) -> str:
    """The recorded history of each device in a Pythonic notation (torch's
    ``_memory_viz trace`` report)."""
    out = io.StringIO()
    for i, entries in enumerate(data["device_traces"]):
        if entries:
            out.write(f"Device {i} ----------------\n")
            _trace_text(data, entries, out)
    return out.getvalue()


# ---------------------------------------------------------------------------------------
# torch's interactive viewer (HTML that loads MemoryViz.js from a CDN when opened).

_VIEWER = "https://cdn.jsdelivr.net/gh/pytorch/pytorch@main/torch/utils/viz/MemoryViz.js"


def _viewer_html(data, viz_kind, device) -> str:
    import base64
    import json
    import pickle

    if device is not None:
        warnings.warn(
            "device argument is deprecated, plots now contain all device",
            FutureWarning,
            stacklevel=3,
        )
    # Protocol 4: the viewer's unpickler reads protocols 2 to 4 only.
    raw = pickle.dumps(data, protocol=4)
    raw += b"\x00" * (3 - len(raw) % 3)
    files = json.dumps([{"name": "snapshot.pickle", "base64": base64.b64encode(raw).decode()}])
    return (
        "\n<!DOCTYPE html>\n<html>\n<head>\n</head>\n<body>\n"
        '<script type="module">\n'
        f'import {{add_local_files}} from "{_VIEWER}"\n'
        f"const local_files = {files}\n"
        f"add_local_files(local_files, {viz_kind!r})\n"
        "</script>\n</body>\n"
    )


def filter_alloc_free_pairs(data):
    """Drop every alloc whose free was recorded, with its frees: what is left are the
    allocations still alive at the end (for looking at what an OOM found). Edits ``data``."""
    for dev, entries in enumerate(data["device_traces"]):
        open_allocs: dict = {}
        requested: set = set()
        drop: set = set()
        for i, e in enumerate(entries):
            action, addr = e["action"], e.get("addr")
            if action == "alloc":
                open_allocs[addr] = i
            elif action == "free_requested":
                requested.add(addr)
                if addr in open_allocs:
                    drop.add(i)
                    drop.add(open_allocs.pop(addr))
            elif action == "free_completed":
                if addr in requested:
                    requested.discard(addr)
                    drop.add(i)
                else:
                    print(f"free_completed without free_requested: {e}")
        if drop:
            data["device_traces"][dev] = [e for i, e in enumerate(entries) if i not in drop]
    return data


def trace_plot(data, device=None, plot_segments=False, filter_freed=False) -> str:
    """torch's interactive 'Active Memory Timeline' as an HTML page (it loads the viewer's
    script from the network when opened; :func:`static_plot` draws offline).

    Args:
        data: a snapshot, as ``cudalite.cuda.memory._snapshot()`` returns.
        device: deprecated; the page shows every device.
        plot_segments (bool): draw reserved segments instead of allocations.
        filter_freed (bool): keep only the allocations never freed in the trace.
    """
    if filter_freed:
        data = filter_alloc_free_pairs(data)
    kind = "Active Cached Memory Timeline" if plot_segments else "Active Memory Timeline"
    return _viewer_html(data, kind, device)


def segment_plot(data, device=None) -> str:
    """torch's interactive 'Allocator State History' (segments and blocks at each event of
    the trace) as an HTML page that loads the viewer's script from the network."""
    return _viewer_html(data, "Allocator State History", device)


# ---------------------------------------------------------------------------------------
# The active-memory timeline, laid out as torch's viewer lays it out.


class Timeline:
    """The active-memory timeline of one device's history, as torch's viewer builds it.

    The x axis counts steps: each allocation and free is one step, and closing the gap a
    free leaves below other allocations takes three more. Allocations are stacked in the
    order they were made; the ``max_entries`` largest are drawn one by one and the rest are
    summed in one band on top.

    Attributes:
        elements: one dict per allocation seen (``addr``, ``size``, ``frames``, ``stream``,
            ``action``: ``'alloc'``, or a free whose allocation predates the history; blocks
            alive in the snapshot's segments that the history never saw allocated have
            ``before_history`` set).
        bands: the drawn allocations: dicts with ``elem`` (index into ``elements``, or
            ``'summarized'``), ``timesteps``, ``offsets`` (bytes below the band at each
            timestep) and ``size`` (an int, or a list per timestep for the summarized band).
        totals: live bytes after each step (drawn and summarized).
        peak_bytes, peak_step: the largest live total and the first step that reaches it.
        initial: the elements alive when the history starts (their allocation is not in
            it), drawn from step 0 at the bottom of the stack.
        reserved: (step, bytes) points where the reserved total changes, from the segment
            events; its start is worked back from the snapshot's segments.
        ooms: (step, requested bytes, device free bytes) of each out-of-memory event.
        steps: the number of steps.
    """

    def __init__(self, snapshot, device, max_entries=15000):
        entries = (
            snapshot["device_traces"][device] if device < len(snapshot["device_traces"]) else []
        )
        elements: list = []
        initial: list = []
        # The events in order: ("act", elem), ("res", delta bytes) or ("oom", size, free).
        events: list = []
        open_allocs: dict = {}
        free_frames: dict = {}  # the stack of each address's latest free_requested
        reserved_delta = 0
        for e in entries:
            action = e["action"]
            if action == "alloc":
                open_allocs[e["addr"]] = len(elements)
                events.append(("act", len(elements)))
                elements.append(e)
            elif action == "free_requested":
                free_frames[e["addr"]] = e.get("frames") or []
            elif action in ("free", "free_completed"):
                elem = open_allocs.pop(e["addr"], None)
                if elem is None:  # allocated before the history starts
                    elem = len(elements)
                    if not e.get("frames") and free_frames.get(e["addr"]):
                        e = dict(e, frames=free_frames[e["addr"]])  # where it was freed
                    elements.append(e)
                    initial.append(elem)
                events.append(("act", elem))
            elif action in ("segment_alloc", "segment_map"):
                events.append(("res", e["size"]))
                reserved_delta += e["size"]
            elif action in ("segment_free", "segment_unmap"):
                events.append(("res", -e["size"]))
                reserved_delta -= e["size"]
            elif action == "oom":
                events.append(("oom", e["size"], e.get("device_free", 0)))
        reserved_end = 0
        for seg in snapshot["segments"]:
            if seg.get("device", device) != device:
                continue
            reserved_end += seg["total_size"]
            for b in seg["blocks"]:
                if b["state"] != "active_allocated" or b["address"] in open_allocs:
                    continue
                initial.append(len(elements))
                elements.append(
                    {
                        "action": "alloc",
                        "addr": b["address"],
                        "size": _block_extra(b)[1],
                        "frames": b.get("frames", []),
                        "stream": seg["stream"],
                        "before_history": True,
                    }
                )
        initial.reverse()
        if not any(ev[0] == "act" for ev in events) and initial:
            events.append(("act", initial.pop()))
        initial_all = list(initial)

        order = sorted(range(len(elements)), key=lambda i: -elements[i]["size"])
        drawn = set(order[:max_entries])

        timestep = 0
        total = 0  # bytes of drawn allocations, stacked
        summarized = 0  # bytes of the others
        totals: list = []
        sum_steps, sum_offsets, sum_sizes = [], [], []
        stack: list = []  # element indices, bottom first
        stack_bands: list = []
        bands: list = []
        summarized_live: set = set()

        def push(elem):
            nonlocal total
            band = {"elem": elem, "timesteps": [timestep], "offsets": [total]}
            band["size"] = elements[elem]["size"]
            stack.append(elem)
            stack_bands.append(band)
            bands.append(band)
            total += band["size"]

        def advance(n):
            nonlocal timestep
            sum_steps.append(timestep)
            sum_offsets.append(total)
            sum_sizes.append(summarized)
            timestep += n
            totals.extend([total + summarized] * n)

        for elem in initial:
            if elem in drawn:
                push(elem)
            else:
                summarized += elements[elem]["size"]
                summarized_live.add(elem)
        peak = total + summarized
        peak_step = peak_action = 0
        acted: list = []  # the element of each alloc or free, in order
        # Worked back from the segments; a snapshot without them (or one that does not
        # match its history) starts the line at zero.
        reserved = reserved_end - reserved_delta
        if reserved < 0:
            reserved = 0
        reserved_pts = [(0, reserved)]
        ooms = []
        for ev in events:
            kind = ev[0]
            if kind == "res":
                reserved += ev[1]
                reserved_pts.append((timestep, reserved))
                continue
            if kind == "oom":
                ooms.append((timestep, ev[1], ev[2]))
                continue
            elem = ev[1]
            size = elements[elem]["size"]
            acted.append(elem)
            if elem not in drawn:
                advance(1)
                if elem in summarized_live:
                    summarized_live.discard(elem)
                    summarized -= size
                else:
                    summarized_live.add(elem)
                    summarized += size
            elif stack and stack[-1] == elem:  # the top one: nothing slides
                advance(1)
                band = stack_bands.pop()
                stack.pop()
                band["timesteps"].append(timestep)
                band["offsets"].append(band["offsets"][-1])
                total -= size
            else:
                pos = _rfind(stack, elem)
                if pos < 0:
                    push(elem)
                    advance(1)
                else:
                    advance(1)
                    band = stack_bands[pos]
                    band["timesteps"].append(timestep)
                    band["offsets"].append(band["offsets"][-1])
                    del stack[pos]
                    del stack_bands[pos]
                    t3 = timestep + 3
                    for above in stack_bands[pos:]:
                        off = above["offsets"][-1]
                        above["timesteps"] += (timestep, t3)
                        above["offsets"] += (off, off - size)
                    advance(3)
                    total -= size
            live = total + summarized
            if live > peak:
                peak, peak_step, peak_action = live, timestep, len(acted)
        for band in stack_bands:
            band["timesteps"].append(timestep)
            band["offsets"].append(band["offsets"][-1])
        sum_offsets.append(total)
        bands.append(
            {
                "elem": "summarized",
                "timesteps": sum_steps,
                "offsets": sum_offsets,
                "size": sum_sizes,
            }
        )
        reserved_pts.append((timestep, reserved))
        self.device = device
        self.elements = elements
        self.bands = bands
        self.totals = totals
        self.peak_bytes = peak
        self.peak_step = peak_step
        self.reserved = reserved_pts
        self.ooms = ooms
        self.steps = timestep
        self.drawn = drawn
        self.initial = initial_all
        self._acted = acted
        self._peak_action = peak_action

    def alive_at_peak(self):
        """Indices of the elements (drawn or summarized) alive at the peak."""
        alive = set(self.initial)
        for elem in self._acted[: self._peak_action]:
            if elem in alive:
                alive.discard(elem)
            else:
                alive.add(elem)
        return sorted(alive)

    def live_at(self, step):
        """(element, offset) of the drawn allocations live at ``step``, bottom first."""
        out = []
        for band in self.bands:
            if band["elem"] == "summarized":
                continue
            ts = band["timesteps"]
            if ts[0] <= step < ts[-1] or (ts[0] == ts[-1] == step):
                out.append((band["elem"], _offset_at(band, step)))
        out.sort(key=lambda x: x[1])
        return out


def _rfind(seq, value) -> int:
    for i in range(len(seq) - 1, -1, -1):
        if seq[i] == value:
            return i
    return -1


def _offset_at(band, step):
    import bisect

    i = bisect.bisect_right(band["timesteps"], step) - 1
    return band["offsets"][max(i, 0)]


def _pick_device(snapshot, device):
    if device is not None:
        if hasattr(device, "index"):
            device = device.index or 0
        return int(device)
    traced = [i for i, t in enumerate(snapshot.get("device_traces", [])) if t]
    if len(traced) > 1:
        raise ValueError(
            f"the snapshot has histories for devices {traced}; pass device= to choose one"
        )
    if traced:
        return traced[0]
    with_segments = sorted({s.get("device", 0) for s in snapshot.get("segments", [])})
    return with_segments[0] if with_segments else 0


def timeline(snapshot, device=None, max_entries=15000) -> Timeline:
    """Lay out the active-memory timeline of ``snapshot`` for ``device`` (by default the
    only device with a recorded history) as torch's viewer does; see :class:`Timeline`."""
    if max_entries < 0:
        raise ValueError(f"max_entries must be non-negative, got {max_entries}")
    return Timeline(snapshot, _pick_device(snapshot, device), max_entries)


# ---------------------------------------------------------------------------------------
# The static SVG picture.

_COLORS = (
    "#4e79a7",
    "#f28e2c",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc949",
    "#af7aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ab",
)
_SUMMARY_COLOR = "#d4d4d4"
_FONT = "font-family='DejaVu Sans, Helvetica, Arial, sans-serif'"


def _esc(text) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _nice_step(span, count):
    """A 1-2-5 step giving about ``count`` ticks over ``span``."""
    if span <= 0:
        return 1
    raw = span / max(count, 1)
    mag = 1
    while mag * 10 <= raw:
        mag *= 10
    while mag > raw and mag > 1:
        mag //= 10
    for m in (1, 2, 5, 10):
        if mag * m >= raw:
            return mag * m
    return mag * 10


def _byte_ticks(top):
    """Tick values in bytes at round binary units (0.25 GiB, 64 MiB, ...) up to ``top``."""
    if top <= 0:
        return [0], 1, "B"
    unit, name = 1, "B"
    for u, n in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if top >= 2 * u:
            unit, name = u, n
            break
    span = top / unit
    for step in (0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100):
        if span / step <= 8:
            break
    else:
        step = _nice_step(span, 6)
    ticks, v = [0.0], 0.0
    while ticks[-1] < top:  # the axis ends at the first tick at or above the top
        v = round(v + step, 6)
        ticks.append(v * unit)
    return ticks, unit, name


def _fmt_tick(value, unit, name):
    v = value / unit
    text = f"{v:.2f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))
    return f"{text} {name}"


def _band_polygons(bands, left, base, sx, sy):
    """(data attribute, fill, points) of each band's polygon: its bottom edge forward and its
    top edge back, in tenths of a pixel, with repeated points dropped."""
    import numpy as np

    kept = [b for b in bands if b["elem"] != "summarized" or any(b["size"])]
    if not kept:
        return []
    ts_all, bottom_all, top_all, lengths = [], [], [], []
    for b in kept:
        ts, offs, size = b["timesteps"], b["offsets"], b["size"]
        n = len(ts)
        ts_all += ts
        bottom_all += offs[:n]
        if isinstance(size, list):
            top_all += [o + z for o, z in zip(offs[:n], size, strict=True)]
        else:
            top_all += [o + size for o in offs[:n]]
        lengths.append(n)
    lengths_a = np.asarray(lengths, dtype=np.int64)
    starts = np.zeros(len(kept), dtype=np.int64)
    np.cumsum(lengths_a[:-1], out=starts[1:])
    x = np.rint((left + np.asarray(ts_all, dtype=np.float64) * sx) * 10).astype(np.int64)
    yb = np.rint((base - np.asarray(bottom_all, dtype=np.float64) * sy) * 10).astype(np.int64)
    yt = np.rint((base - np.asarray(top_all, dtype=np.float64) * sy) * 10).astype(np.int64)
    # Each band's polygon: bottom points forward, then top points backward.
    total = int(lengths_a.sum())
    band_of = np.repeat(np.arange(len(kept)), lengths_a)
    pos = np.arange(total) - starts[band_of]  # index inside the band
    rev = starts[band_of] + lengths_a[band_of] - 1 - pos
    px = np.empty(2 * total, dtype=np.int64)
    py = np.empty(2 * total, dtype=np.int64)
    poly_start = 2 * starts
    fwd_at = poly_start[band_of] + pos
    back_at = poly_start[band_of] + lengths_a[band_of] + pos
    px[fwd_at], py[fwd_at] = x, yb
    px[back_at], py[back_at] = x[rev], yt[rev]
    # Inside one pixel column only the first and the last point of a run matter: a band's
    # offset only ever falls (allocations below it are freed, none are added), so its edges
    # are monotonic and the run's ends hold its extremes. Each polygon's first and last
    # points (its start, where its top is highest) are always kept.
    col = px // 10
    keep = np.ones(2 * total, dtype=bool)
    keep[1:-1] = (col[1:-1] != col[:-2]) | (col[1:-1] != col[2:])
    keep[1:] &= (px[1:] != px[:-1]) | (py[1:] != py[:-1])
    keep[poly_start] = True
    keep[poly_start + 2 * lengths_a - 1] = True
    band_idx = np.repeat(np.arange(len(kept)), 2 * lengths_a)[keep]
    flat = np.empty(2 * int(keep.sum()), dtype=np.int64)
    flat[0::2], flat[1::2] = px[keep], py[keep]
    bounds = np.searchsorted(band_idx, np.arange(len(kept) + 1)) * 2
    numbers = list(map(str, flat.tolist()))
    out = []
    for i, b in enumerate(kept):
        text = ",".join(numbers[bounds[i] : bounds[i + 1]])
        if b["elem"] == "summarized":
            out.append(("data-elem='summarized'", _SUMMARY_COLOR, text))
        else:
            out.append((f"data-elem='{b['elem']}'", _COLORS[b["elem"] % len(_COLORS)], text))
    return out


def _where(e) -> str:
    frame = _user_frame(e.get("frames") or [])
    if e["action"] != "alloc":  # only its free is in the history
        return (
            f"alloc not recorded; freed at {_frame_fmt(frame)}"
            if frame
            else ("allocated before recording started")
        )
    if frame:
        return _frame_fmt(frame)
    return "allocated before recording started" if e.get("before_history") else "(no stack)"


def _legend_rows(tl, top, sites=5):
    """Rows (swatch colour or None, text, style, numbered element or None) of the legend:
    the largest allocations alive at the peak (equal neighbours merged into one row), the
    code locations holding the most memory there, and the out-of-memory events."""
    rows: list = []
    alive = tl.alive_at_peak() if tl.peak_bytes > 0 else []
    if alive and top > 0:
        named = sorted(alive, key=lambda i: (-tl.elements[i]["size"], i))[:top]
        rows.append(
            (None, f"Largest allocations alive at the peak (step {tl.peak_step})", "bold", None)
        )
        i = 0
        while i < len(named):
            e = tl.elements[named[i]]
            key = (e["size"], _where(e))
            j = i + 1
            while (
                j < len(named)
                and (tl.elements[named[j]]["size"], _where(tl.elements[named[j]])) == key
            ):
                j += 1
            tags = f"{i + 1}" if j == i + 1 else f"{i + 1}-{j}"
            each = " each" if j > i + 1 else ""
            color = _COLORS[named[i] % len(_COLORS)] if named[i] in tl.drawn else _SUMMARY_COLOR
            rows.append((color, f"{tags}. {_format_size(key[0])}{each}  {key[1]}", "", named[i]))
            rows += [(None, "", "skip", n) for n in named[i + 1 : j]]
            i = j
        by_site: dict = {}
        for k in alive:
            e = tl.elements[k]
            n, b = by_site.get(_where(e), (0, 0))
            by_site[_where(e)] = (n + 1, b + e["size"])
        if len(by_site) > 1 or len(alive) > len(named):
            rows.append((None, "Memory alive at the peak by where it was allocated", "bold", None))
            ranked = sorted(by_site.items(), key=lambda kv: -kv[1][1])
            for where, (n, b) in ranked[:sites]:
                plural = "s" if n != 1 else ""
                rows.append(
                    (None, f"{_format_size(b)} in {n} allocation{plural}  {where}", "", None)
                )
            if len(ranked) > sites:
                rest = sum(b for _, (_, b) in ranked[sites:])
                rows.append(
                    (
                        None,
                        f"{_format_size(rest)} elsewhere ({len(ranked) - sites} more places)",
                        "",
                        None,
                    )
                )
    for t, req, free in tl.ooms[:3]:
        rows.append(
            (
                None,
                f"\u25bc out of memory at step {t}: {_format_size(req)} requested, "
                f"{_format_size(free)} free on the device",
                "oom",
                None,
            )
        )
    if len(tl.ooms) > 3:
        rows.append((None, f"({len(tl.ooms) - 3} more out-of-memory events)", "oom", None))
    return rows


def static_plot(
    snapshot,
    device=None,
    max_entries=15000,
    width=1024,
    height=576,
    show_reserved=True,
    top=10,
    title=None,
) -> str:
    """Draw ``snapshot``'s active-memory timeline as a self-contained SVG document (no
    script, no network) and return its text.

    The picture is torch's 'Active Memory Timeline' (each allocation a band, stacked in
    the order they were made, the x axis counting allocation events), plus the reserved
    bytes (the allocator's segments) as a line, a red marker at each out-of-memory event,
    and the ``top`` largest allocations alive at the peak numbered and named by the first
    frame of user code in their stack (recorded with
    ``cudalite.cuda.memory._record_memory_history(stacks="python")``).

    Args:
        snapshot: a snapshot dict (``cudalite.cuda.memory._snapshot()`` or an unpickled
            ``_dump_snapshot`` file, from cudalite or torch).
        device (int, optional): the device to draw; by default the only one with history.
        max_entries (int): allocations drawn one by one (the largest); the rest are summed
            in one grey band.
        width, height (int): size of the plot area in pixels (axes and legend add to it).
        show_reserved (bool): draw the reserved-bytes line.
        top (int): allocations alive at the peak to number and name.
        title (str, optional): replaces the default title.
    """
    if width < 64 or height < 64:
        raise ValueError(f"the plot area must be at least 64x64 pixels, got {width}x{height}")
    tl = timeline(snapshot, device, max_entries)
    return _render_svg(tl, width, height, show_reserved, top, title)


def _render_svg(tl, width, height, show_reserved, top, title):
    left, right, head = 84, 24, 56
    rows = _legend_rows(tl, top)
    axis_h = 44
    shown = [r for r in rows if r[2] != "skip"]
    legend_h = 16 + 18 * len(shown) if shown else 8
    total_w = left + width + right
    total_h = head + height + axis_h + legend_h
    named = [r[3] for r in rows if r[3] is not None]
    offsets = dict(tl.live_at(tl.peak_step)) if named else {}

    max_reserved = max((r for _, r in tl.reserved), default=0) if show_reserved else 0
    y_top = max(tl.peak_bytes, max_reserved, 1)
    ticks, unit, unit_name = _byte_ticks(y_top)
    y_top = max(y_top, ticks[-1])
    steps = max(tl.steps, 1)
    sx = width / steps
    sy = height / y_top
    base = head + height

    def X(t):
        return left + t * sx

    def Y(b):
        return base - b * sy

    out = []
    w = out.append
    w(
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{total_w}' height='{total_h}' "
        f"viewBox='0 0 {total_w} {total_h}' data-peak-bytes='{tl.peak_bytes}' "
        f"data-peak-step='{tl.peak_step}' data-steps='{tl.steps}'>"
    )
    w(f"<rect width='{total_w}' height='{total_h}' fill='white'/>")
    heading = title or f"Active memory timeline, device {tl.device}"
    w(f"<text x='{left}' y='22' font-size='16' font-weight='bold' {_FONT}>{_esc(heading)}</text>")
    sub = (
        f"peak allocated {_format_size(tl.peak_bytes)} ({tl.peak_bytes} bytes) at step "
        f"{tl.peak_step}"
    )
    if show_reserved and tl.reserved:
        sub += f"; peak reserved {_format_size(max_reserved)}"
    sub += f"; {len(tl.elements)} allocations, {tl.steps} steps"
    w(f"<text x='{left}' y='42' font-size='12' fill='#333' {_FONT}>{_esc(sub)}</text>")

    # Grid and y axis.
    w("<g stroke='#e6e6e6' stroke-width='1'>")
    for v in ticks:
        w(f"<line x1='{left}' y1='{Y(v):.1f}' x2='{left + width}' y2='{Y(v):.1f}'/>")
    w("</g>")
    w(f"<g font-size='11' text-anchor='end' fill='#333' {_FONT}>")
    for v in ticks:
        w(f"<text x='{left - 6}' y='{Y(v) + 4:.1f}'>{_fmt_tick(v, unit, unit_name)}</text>")
    w("</g>")

    # The allocation bands, in tenths of a pixel (integers format fast and exactly).
    w(f"<g stroke='none' transform='scale(0.1)' data-bands='{len(tl.bands)}'>")
    for tag, color, points in _band_polygons(tl.bands, left, base, sx, sy):
        w(f"<polygon {tag} fill='{color}' points='{points}'/>")
    w("</g>")

    # Reserved bytes.
    if show_reserved and len(tl.reserved) > 1:
        pts, last = [], None
        for t, r in tl.reserved:
            if last is not None:
                pts.append(f"{X(t):.1f},{Y(last):.1f}")
            pts.append(f"{X(t):.1f},{Y(r):.1f}")
            last = r
        w(
            "<polyline fill='none' stroke='#222' stroke-width='1.5' stroke-dasharray='6,3' "
            f"points='{' '.join(_dedupe(pts))}'/>"
        )

    # The peak and the numbered allocations alive there.
    px = X(tl.peak_step)
    if tl.peak_bytes > 0:
        w(
            f"<line x1='{px:.1f}' y1='{head}' x2='{px:.1f}' y2='{base}' stroke='#555' "
            "stroke-width='1' stroke-dasharray='2,2'/>"
        )
        label = f"peak {_format_size(tl.peak_bytes)}"
        lw = 6.5 * len(label) + 6  # about 6.5 px a character at 11 px
        right_side = px + 6 + lw < left + width
        lx = px + 4 if right_side else px - 4 - lw
        ly = max(Y(tl.peak_bytes) + 14, head + 14)  # just below the peak, inside the plot
        w(
            f"<rect x='{lx:.1f}' y='{ly - 11:.1f}' width='{lw:.1f}' height='15' fill='white' "
            "fill-opacity='0.85'/>"
        )
        w(
            f"<text x='{lx + 3:.1f}' y='{ly:.1f}' font-size='11' fill='#222' {_FONT}>"
            f"{_esc(label)}</text>"
        )
    for i, elem in enumerate(named, 1):
        size = tl.elements[elem]["size"]
        if elem not in offsets or size * sy < 12:
            continue
        cy = Y(offsets[elem] + size / 2)
        w(f"<circle cx='{px:.1f}' cy='{cy:.1f}' r='8' fill='white' stroke='#222'/>")
        w(
            f"<text x='{px:.1f}' y='{cy + 4:.1f}' font-size='10' text-anchor='middle' "
            f"{_FONT}>{i}</text>"
        )

    # Out-of-memory events.
    for t, _, _ in tl.ooms:
        x = X(t)
        w(
            f"<line x1='{x:.1f}' y1='{head}' x2='{x:.1f}' y2='{base}' stroke='#d62728' "
            "stroke-width='1.5'/>"
        )
        w(
            f"<path d='M{x - 6:.1f},{head - 10} L{x + 6:.1f},{head - 10} L{x:.1f},{head}Z' "
            "fill='#d62728' data-oom='1'/>"
        )

    # Frame and x axis.
    w(f"<rect x='{left}' y='{head}' width='{width}' height='{height}' fill='none' stroke='#888'/>")
    step = _nice_step(steps, 8)
    w(f"<g font-size='11' text-anchor='middle' fill='#333' {_FONT}>")
    t = 0
    while t <= steps:
        w(f"<line x1='{X(t):.1f}' y1='{base}' x2='{X(t):.1f}' y2='{base + 4}' stroke='#888'/>")
        w(f"<text x='{X(t):.1f}' y='{base + 16}'>{t}</text>")
        t += step
    w(
        f"<text x='{left + width / 2:.1f}' y='{base + 34}' font-size='12'>"
        "allocation events (each alloc or free is a step; closing a gap takes three)</text>"
    )
    w("</g>")

    # Legend.
    y = base + axis_h + 14
    for color, text, style, _ in shown:
        x = left
        if color is not None:
            w(f"<rect x='{x}' y='{y - 10}' width='12' height='12' fill='{color}'/>")
            x += 18
        attrs = {"bold": "font-weight='bold'", "oom": "fill='#d62728'", "": ""}[style]
        w(f"<text x='{x}' y='{y}' font-size='12' {attrs} {_FONT}>{_esc(text)}</text>")
        y += 18
    if show_reserved and len(tl.reserved) > 1:
        lx = left + width - 150
        w(
            f"<line x1='{lx}' y1='{head - 14}' x2='{lx + 28}' y2='{head - 14}' stroke='#222' "
            "stroke-width='1.5' stroke-dasharray='6,3'/>"
        )
        w(f"<text x='{lx + 34}' y='{head - 10}' font-size='11' {_FONT}>reserved bytes</text>")
    w("</svg>\n")
    return "\n".join(out)


def _dedupe(pts):
    out = []
    for p in pts:
        if not out or out[-1] != p:
            out.append(p)
    return out


# ---------------------------------------------------------------------------------------
# Command line.


def _read(name):
    import pickle

    if name == "-":
        data = pickle.load(sys.stdin.buffer)
    else:
        with open(name, "rb") as f:
            data = pickle.load(f)
    if isinstance(data, list):  # a memory_snapshot() list of segments
        data = {"segments": data, "device_traces": []}
    return data


def _write(name, text):
    with open(name, "w") as f:
        f.write(text)


def main(argv=None, prog="python -m cudalite.cuda._memory_viz") -> int:
    """``python -m cudalite.cuda._memory_viz``: torch's sub-commands and ``plot``."""
    import argparse

    source = "pickled memory statistics from cudalite.cuda.memory._snapshot()"
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Visualize memory dumps produced by cudalite.cuda.memory._snapshot()",
    )
    sub = parser.add_subparsers(dest="action", required=True)

    def add(name, help_text, *, output=None):
        p = sub.add_parser(name, description=help_text, help=help_text)
        p.add_argument("input", help=source)
        if output:
            p.add_argument("-o", "--output", default=output, help=f"(default: {output})")
        return p

    add("stats", "Overall statistics and how the allocator's segments are filled.")
    add("trace", "The recorded allocation events in a Pythonic notation.")
    add("segments", "Flame graph of what each segment holds.", output="output.svg")
    add("memory", "Flame graph of the program locations that hold memory.", output="output.svg")
    p = sub.add_parser("compare", help="Flame graph of segments added or removed between two.")
    p.add_argument("before", help=source)
    p.add_argument("after", help=source)
    p.add_argument("-o", "--output", default="output.svg")
    p = add("trace_plot", "torch's interactive timeline (HTML).", output="output.html")
    p.add_argument("-d", "--device", type=int, default=None)
    p.add_argument("-s", "--segments", action="store_true", help="plot segments")
    p.add_argument("-f", "--filter_freed", action="store_true", help="only unfreed allocations")
    p = add("segment_plot", "torch's interactive segment view (HTML).", output="output.html")
    p.add_argument("-d", "--device", type=int, default=None)
    p = add(
        "plot",
        "Static SVG of the active-memory timeline (no network needed).",
        output="timeline.svg",
    )
    p.add_argument("-d", "--device", type=int, default=None)
    p.add_argument("--max-entries", type=int, default=15000, help="allocations drawn one by one")
    p.add_argument("--top", type=int, default=10, help="allocations named at the peak")
    p.add_argument("--no-reserved", action="store_true", help="leave out the reserved line")
    args = parser.parse_args(argv)

    if args.action == "stats":
        print(segsum(_read(args.input)))
    elif args.action == "trace":
        print(trace(_read(args.input)))
    elif args.action == "segments":
        _write(args.output, segments(_read(args.input)))
    elif args.action == "memory":
        _write(args.output, memory(_read(args.input)))
    elif args.action == "compare":
        before, after = _read(args.before), _read(args.after)
        _write(args.output, compare(before["segments"], after["segments"]))
    elif args.action == "trace_plot":
        html = trace_plot(
            _read(args.input),
            device=args.device,
            plot_segments=args.segments,
            filter_freed=args.filter_freed,
        )
        _write(args.output, html)
    elif args.action == "segment_plot":
        _write(args.output, segment_plot(_read(args.input), device=args.device))
    elif args.action == "plot":
        svg = static_plot(
            _read(args.input),
            device=args.device,
            max_entries=args.max_entries,
            top=args.top,
            show_reserved=not args.no_reserved,
        )
        _write(args.output, svg)
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
