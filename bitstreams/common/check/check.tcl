# Checks the Vivado flow with plain tclsh: for each board, runs
# common/build.tcl in a fresh interpreter against the stubbed Vivado
# commands of vivado_stub.tcl (the XDC files are executed too, through the
# stubbed read_xdc), then checks what was called:
#   * every step of the non-project flow, in order, ending in write_bitstream;
#   * hierarchical utilisation and timing summary reports after synthesis and
#     after routing;
#   * every IP created and generated; the board's Verilog defines passed;
#   * every get_ports/get_nets name exists in mrc_alveo_top for that board;
#   * every top port except the GT serial lanes (placed by the IPs) has a
#     PACKAGE_PIN, and every PACKAGE_PIN / create_clock line cites the
#     card's user guide;
# and the failure paths: unknown board, missing RTL, negative slack (exit 1)
# and MRC_ALLOW_TIMING_FAILURE=1 (bitstream written anyway).
# Usage: tclsh check.tcl            (exits non-zero on the first failure)

set here       [file dirname [file normalize [info script]]]
set common_dir [file dirname $here]
set root       [file dirname $common_dir]
set top_file   [file join $common_dir mrc_alveo_top.v]
set docs       {u250 UG1289 u280 UG1314 u55c UG1469}
set failures   0

proc fail {msg} {
    global failures
    puts stderr "FAIL: $msg"
    incr failures
}

# The top's ports (bit names and whole names) and wires, under the board's
# `define list, with a minimal `ifdef/`ifndef/`else/`endif preprocessor.
proc top_ports_and_nets {file defines} {
    set f [open $file]
    set text [read $f]
    close $f
    set stack {}
    set active 1
    set lines {}
    foreach line [split $text "\n"] {
        set t [string trim $line]
        if {[regexp {^`(ifdef|ifndef)\s+(\w+)} $t -> kw name]} {
            lappend stack $active
            set def [expr {[lsearch -exact $defines $name] >= 0}]
            set cond [expr {$kw eq "ifdef" ? $def : !$def}]
            set active [expr {$active && $cond}]
            continue
        }
        if {[regexp {^`else} $t]} {
            set outer [lindex $stack end]
            set active [expr {$outer && !$active}]
            continue
        }
        if {[regexp {^`endif} $t]} {
            set active [lindex $stack end]
            set stack [lrange $stack 0 end-1]
            continue
        }
        if {$active} { lappend lines $line }
    }
    set body [join $lines "\n"]
    if {![regexp {module\s+mrc_alveo_top\s*\((.*?)\);} $body -> header]} {
        error "no module header in $file"
    }
    set ports {}
    set whole {}
    foreach {m dir hi lo name} [regexp -all -inline {(input|output)\s+wire\s*(?:\[(\d+):(\d+)\])?\s*(\w+)} $header] {
        lappend whole $name
        lappend ports $name
        if {$hi ne ""} {
            for {set i $lo} {$i <= $hi} {incr i} { lappend ports "$name\[$i\]" }
        }
    }
    set nets {}
    foreach {m name} [regexp -all -inline {wire\s+(?:\[\d+:\d+\]\s*)?(\w+)} $body] {
        lappend nets $name
    }
    return [list $ports $whole $nets]
}

# Run build.tcl for `board` in a child interpreter with the stubs. Returns
# {exit_code calls errors}; exit_code is "" when the script ran to its end.
proc run_build {board rtl_dir out_dir {slack 0.050} {allow_fail 0}} {
    global here common_dir
    set i [interp create]
    interp eval $i [list source [file join $here vivado_stub.tcl]]
    set defines {}
    set bt [file join [file dirname $common_dir] $board board.tcl]
    if {[file exists $bt]} {
        set b [interp create]
        interp eval $b [list source $bt]
        set defines [interp eval $b {set mrc_defines}]
        interp delete $b
    }
    lassign [top_ports_and_nets [file join $common_dir mrc_alveo_top.v] $defines] ports whole nets
    interp eval $i [list set ::stub_ports $ports]
    interp eval $i [list set ::stub_nets $nets]
    interp eval $i [list set ::stub_slack $slack]
    if {$allow_fail} { interp eval $i {set ::env(MRC_ALLOW_TIMING_FAILURE) 1} } else { interp eval $i {unset -nocomplain ::env(MRC_ALLOW_TIMING_FAILURE)} }
    interp eval $i {set ::stub_exit ""}
    interp eval $i {proc exit {{code 0}} { set ::stub_exit $code; return -code error STUB_EXIT }}
    interp eval $i {proc puts {args} {}}
    interp eval $i [list set argv [list $board $rtl_dir $out_dir]]
    interp eval $i [list set argc 3]
    set rc [catch {interp eval $i [list source [file join $common_dir build.tcl]]} err]
    set code [interp eval $i {set ::stub_exit}]
    if {$rc && $err ne "STUB_EXIT"} {
        set calls [interp eval $i {set ::stub_calls}]
        interp delete $i
        return [list error $calls [list "build.tcl raised: $err"]]
    }
    set calls [interp eval $i {set ::stub_calls}]
    set errors [interp eval $i {set ::stub_errors}]
    interp delete $i
    return [list $code $calls $errors]
}

proc commands {calls} {
    set c {}
    foreach call $calls { lappend c [lindex $call 0] }
    return $c
}

# Indices of the calls to `cmd` whose arguments contain `flag` ("" = any).
proc find_calls {calls cmd {flag ""}} {
    set out {}
    set n 0
    foreach call $calls {
        if {[lindex $call 0] eq $cmd && ($flag eq "" || [lsearch -exact $call $flag] >= 0)} { lappend out $n }
        incr n
    }
    return $out
}

set tmp [file join [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}] "mrc-bitstreams-check-[pid]"]
set rtl [file join $tmp rtl]
file mkdir $rtl
foreach f {mrc_core.v mrc_dma_axi.v} {
    set h [open [file join $rtl $f] w]; puts $h "// placeholder for the check"; close $h
}

foreach {board doc} $docs {
    set out [file join $tmp $board]
    lassign [run_build $board $rtl $out] code calls errors
    if {$code ne ""} { fail "$board: build.tcl exited with $code"; continue }
    foreach e $errors { fail "$board: $e" }
    set cmds [commands $calls]
    # The flow's steps, in order.
    set last -1
    foreach step {create_project create_ip generate_target synth_ip read_verilog read_xdc synth_design
                  opt_design place_design phys_opt_design route_design write_bitstream} {
        set at [lsearch -exact -start [expr {$last + 1}] $cmds $step]
        if {$at < 0} { fail "$board: step $step missing or out of order" } else { set last $at }
    }
    # Reports: hierarchical utilisation and timing summary, after synthesis
    # (before opt_design) and after routing (after route_design).
    set synth [lsearch -exact $cmds synth_design]
    set route [lsearch -exact $cmds route_design]
    foreach {cmd flag} {report_utilization -hierarchical report_timing_summary ""} {
        set idx [find_calls $calls $cmd $flag]
        set before 0; set after 0
        foreach x $idx {
            if {$x > $synth && $x < $route} { incr before }
            if {$x > $route} { incr after }
        }
        if {!$before || !$after} { fail "$board: $cmd $flag not run after both synthesis and routing" }
    }
    # Six IPs, all referenced by the top.
    set ips {}
    foreach x [find_calls $calls create_ip] {
        set c [lindex $calls $x]
        lappend ips [lindex $c [expr {[lsearch $c -module_name] + 1}]]
    }
    set f [open $top_file]; set toptext [read $f]; close $f
    foreach ip $ips {
        if {![regexp "\\m$ip\\s+\\w+\\s*\\(" $toptext]} { fail "$board: IP $ip is generated but not instantiated in the top" }
    }
    if {[llength $ips] != 6} { fail "$board: expected 6 IPs, got $ips" }
    # The board's defines reach synthesis.
    set s [lindex $calls $synth]
    set defs [lindex $s [expr {[lsearch $s -verilog_define] + 1}]]
    if {[lsearch -exact $defs "MRC_BOARD_[string toupper $board]"] < 0} { fail "$board: synth_design lacks -verilog_define MRC_BOARD_[string toupper $board]" }
    # Pins: every non-GT port placed; every pin/clock line cites the guide.
    set b [interp create]; interp eval $b [list source [file join $root $board board.tcl]]
    set defines [interp eval $b {set mrc_defines}]; set xdcs [interp eval $b {set mrc_xdc}]; interp delete $b
    lassign [top_ports_and_nets $top_file $defines] ports whole nets
    set placed {}
    foreach x $xdcs {
        set h [open [file join $root $board $x]]; set lines [split [read $h] "\n"]; close $h
        set n 0
        foreach line $lines {
            incr n
            if {[regexp {^\s*#} $line]} continue
            if {[regexp {PACKAGE_PIN|create_clock} $line] && ![regexp ";#.*$doc" $line]} {
                fail "$board: $x:$n has a pin or clock without a $doc citation"
            }
            if {[regexp {PACKAGE_PIN} $line] && [regexp {\[get_ports\s+(\{[^\}]*\}|[^\]\s]+)\s*\]} $line -> p]} {
                lappend placed [string trim $p "{} "]
            }
        }
    }
    foreach p $whole {
        if {[regexp {^(pcie_rx|pcie_tx|qsfp0_rx|qsfp0_tx)_[pn]$} $p]} continue
        set w [lsearch -all -inline $ports "$p\\\[*"]
        if {[llength $w] == 0} { set w [list $p] }
        foreach bit $w {
            if {[lsearch -exact $placed $bit] < 0} { fail "$board: port $bit has no PACKAGE_PIN in $xdcs" }
        }
    }
    puts "ok: $board ([llength $calls] Vivado calls, IPs: $ips, [llength $placed] pins placed)"
}

# Failure paths.
lassign [run_build u999 $rtl [file join $tmp bad]] code
if {$code ne "2"} { fail "unknown board: expected exit 2, got '$code'" } else { puts "ok: unknown board exits 2" }
lassign [run_build u280 [file join $tmp nowhere] [file join $tmp bad]] code calls
if {$code ne "2" || [lsearch -exact [commands $calls] synth_design] >= 0} { fail "missing RTL: expected exit 2 before synthesis, got '$code'" } else { puts "ok: missing RTL exits 2" }
lassign [run_build u250 $rtl [file join $tmp neg] -0.120] code calls
if {$code ne "1" || [lsearch -exact [commands $calls] write_bitstream] >= 0} { fail "negative slack: expected exit 1 without a bitstream, got '$code'" } else { puts "ok: negative slack exits 1 without a bitstream" }
lassign [run_build u250 $rtl [file join $tmp neg2] -0.120 1] code calls
if {$code ne "" || [lsearch -exact [commands $calls] write_bitstream] < 0} { fail "MRC_ALLOW_TIMING_FAILURE=1: expected a bitstream, got '$code'" } else { puts "ok: MRC_ALLOW_TIMING_FAILURE=1 writes the bitstream" }

file delete -force $tmp
if {$failures} {
    puts stderr "check.tcl: $failures failure(s)"
    exit 1
}
puts "check.tcl: all Tcl and XDC checks passed"
