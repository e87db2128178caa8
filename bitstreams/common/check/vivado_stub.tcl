# Stubs of the Vivado commands the flow uses, for checking the Tcl and XDC
# with plain tclsh (no Vivado here). Each stub records its call in
# ::stub_calls; XDC object queries check their names against the top's
# ports and nets (::stub_ports, ::stub_nets, set by check.tcl) so a
# misspelt or missing port fails the check. Any command not stubbed here
# fails too (`unknown`), which catches misspelt Vivado commands.

set ::stub_calls {}
set ::stub_errors {}
set ::stub_slack 0.050
set ::stub_ports {}
set ::stub_nets {}

proc stub_record {cmd args} {
    lappend ::stub_calls [concat [list $cmd] $args]
}

proc unknown {args} {
    error "not a stubbed Vivado command: [lindex $args 0]"
}

# Project, IP and flow commands: record and succeed.
foreach cmd {
    create_project current_project current_design set_operating_conditions
    generate_target synth_ip synth_design write_checkpoint
    opt_design place_design phys_opt_design route_design report_utilization
    report_timing_summary report_clock_interaction report_cdc report_drc
    report_power write_bitstream
} {
    proc $cmd {args} "stub_record $cmd {*}\$args; return {}"
}

proc create_ip {args} {
    stub_record create_ip {*}$args
    set i [lsearch $args -module_name]
    if {$i < 0} { error "create_ip without -module_name" }
    lappend ::stub_ips [lindex $args [expr {$i + 1}]]
    return [lindex $args [expr {$i + 1}]]
}
set ::stub_ips {}

proc get_ips {args} {
    stub_record get_ips {*}$args
    if {[llength $args] == 0} { return $::stub_ips }
    foreach name $args {
        if {[lsearch -exact $::stub_ips $name] < 0} {
            lappend ::stub_errors "get_ips: no IP named $name (create_ip it first)"
        }
    }
    return $args
}

# set_property: `set_property NAME VALUE OBJ` or `-dict LIST OBJ`. CONFIG.*
# values on IPs must be non-empty (an empty board setting would reach
# Vivado as an invalid value).
proc set_property {args} {
    stub_record set_property {*}$args
    if {[lindex $args 0] eq "-dict"} {
        if {[llength $args] != 3} { error "set_property -dict: expected a list and an object" }
        set d [lindex $args 1]
        if {[llength $d] % 2} { error "set_property -dict: odd-length list: $d" }
        foreach {k v} $d {
            if {[string match CONFIG.* $k] && $v eq ""} {
                lappend ::stub_errors "set_property: $k has an empty value"
            }
        }
    } elseif {[llength $args] < 3} {
        error "set_property: expected name, value and objects: $args"
    }
    return {}
}

proc read_verilog {args} {
    stub_record read_verilog {*}$args
    foreach f [lindex $args end] {
        if {![file exists $f]} { lappend ::stub_errors "read_verilog: $f does not exist" }
    }
    return {}
}

proc get_timing_paths {args} { stub_record get_timing_paths {*}$args; return timing_path }
proc get_property {name obj} {
    stub_record get_property $name $obj
    if {$name eq "SLACK"} { return $::stub_slack }
    return {}
}

# ---- XDC object queries -----------------------------------------------
# A pattern matches port bit names (`led[0]`) or whole ports (`led`); `*`
# is the only wildcard (brackets are literal, as in Vivado's get_ports).
proc stub_match {pattern names} {
    set p [string map {[ \\[ ] \\] ? \\?} $pattern]
    foreach n $names {
        if {[string match $p $n]} { return 1 }
    }
    return 0
}

proc get_ports {args} {
    stub_record get_ports {*}$args
    set pats [lindex $args end]
    foreach p $pats {
        if {![stub_match $p $::stub_ports]} {
            lappend ::stub_errors "get_ports: no port of the top matches '$p'"
        }
    }
    return [list ports $pats]
}

proc get_nets {args} {
    stub_record get_nets {*}$args
    foreach p [lindex $args end] {
        if {![stub_match $p $::stub_nets]} {
            lappend ::stub_errors "get_nets: no net of the top matches '$p'"
        }
    }
    return [list nets [lindex $args end]]
}

proc create_clock {args} {
    stub_record create_clock {*}$args
    set i [lsearch $args -period]
    if {$i < 0 || ![string is double -strict [lindex $args [expr {$i + 1}]]]} {
        lappend ::stub_errors "create_clock without a numeric -period: $args"
    }
    return {}
}

foreach cmd {set_false_path set_max_delay set_input_delay set_output_delay set_clock_groups} {
    proc $cmd {args} "stub_record $cmd {*}\$args; return {}"
}

# read_xdc runs the constraint file through these stubs (XDC is Tcl).
proc read_xdc {file} {
    stub_record read_xdc $file
    uplevel #0 [list source $file]
}
