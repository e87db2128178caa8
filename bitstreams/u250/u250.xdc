# Alveo U250 pins and clocks for mrc_alveo_top.
# Source of every pin: UG1289 (Alveo U200/U250 user guide) and the board
# XDC published with it (alveo-u250-xdc.xdc); cross-checked against
# Corundum's fpga/mqnic/AU250 XDC. The comment on each line names the
# bank/function as the board XDC does. GT serial pins (PCIe lanes, QSFP
# lanes) are placed by the IPs' GT location settings (board.tcl).

# Configuration (UG1289 "Configuration": SPI x4 flash, 1.8 V config bank)
set_property CFGBVS GND                              [current_design] ;# UG1289 board XDC
set_property CONFIG_VOLTAGE 1.8                      [current_design] ;# UG1289 board XDC
set_property BITSTREAM.GENERAL.COMPRESS TRUE         [current_design] ;# size only
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4         [current_design] ;# UG1289: quad SPI flash

# PCIe reference clock, 100 MHz from the edge connector
set_property PACKAGE_PIN AM11 [get_ports pcie_refclk_p] ;# UG1289 board XDC: Bank 226 MGTREFCLK0P_226 (net PEX_REFCLK_C_P)
set_property PACKAGE_PIN AM10 [get_ports pcie_refclk_n] ;# UG1289 board XDC: Bank 226 MGTREFCLK0N_226 (net PEX_REFCLK_C_N)
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p] ;# UG1289: PCIe reference clock 100 MHz

# PCIe reset (PERST#, active low, from the edge connector)
set_property PACKAGE_PIN BD21 [get_ports pcie_perst_n] ;# UG1289 board XDC: Bank 64 IO_L23P_T3U_N8_64 (PCIE_PERST_LS), VCCO 1.2 V
set_property IOSTANDARD LVCMOS12 [get_ports pcie_perst_n] ;# UG1289: bank 64 VCCO = 1.2 V
set_property PULLUP true [get_ports pcie_perst_n] ;# UG1289 board XDC
set_false_path -from [get_ports pcie_perst_n]

# QSFP0 (QSFP28 cage 0) reference clock: SI5335 output on MGTREFCLK1 of
# quad 231; FS[1:0] = 2'b10 selects 161.1328125 MHz (the top drives it)
set_property PACKAGE_PIN K11 [get_ports qsfp0_refclk_p] ;# UG1289 board XDC: Bank 231 MGTREFCLK1P_231
set_property PACKAGE_PIN K10 [get_ports qsfp0_refclk_n] ;# UG1289 board XDC: Bank 231 MGTREFCLK1N_231
create_clock -period 6.206 -name qsfp0_refclk [get_ports qsfp0_refclk_p] ;# UG1289: 161.1328125 MHz with QSFP0_FS = 10

# QSFP0 clock-chip and module control (bank 64, 1.2 V)
set_property -dict {PACKAGE_PIN AT20 IOSTANDARD LVCMOS12} [get_ports {qsfp0_fs[0]}]      ;# UG1289 board XDC: QSFP0 SI5335 frequency select FS[0], bank 64
set_property -dict {PACKAGE_PIN AU22 IOSTANDARD LVCMOS12} [get_ports {qsfp0_fs[1]}]      ;# UG1289 board XDC: QSFP0 SI5335 frequency select FS[1], bank 64
set_property -dict {PACKAGE_PIN AT22 IOSTANDARD LVCMOS12} [get_ports qsfp0_refclk_reset] ;# UG1289 board XDC: QSFP0 SI5335 reset, bank 64
set_property -dict {PACKAGE_PIN BE17 IOSTANDARD LVCMOS12} [get_ports qsfp0_resetl]       ;# UG1289 board XDC: QSFP0 module ResetL, bank 64
set_property -dict {PACKAGE_PIN BD18 IOSTANDARD LVCMOS12} [get_ports qsfp0_lpmode]       ;# UG1289 board XDC: QSFP0 module LPMode, bank 64
set_property -dict {PACKAGE_PIN BE16 IOSTANDARD LVCMOS12} [get_ports qsfp0_modsell]      ;# UG1289 board XDC: QSFP0 module ModSelL, bank 64
set_false_path -to [get_ports {qsfp0_fs[*] qsfp0_refclk_reset qsfp0_resetl qsfp0_lpmode qsfp0_modsell}]

# Status LEDs (bank 64, 1.2 V)
set_property -dict {PACKAGE_PIN BC21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[0]}] ;# UG1289 board XDC: user status LED 0, bank 64
set_property -dict {PACKAGE_PIN BB21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[1]}] ;# UG1289 board XDC: user status LED 1, bank 64
set_property -dict {PACKAGE_PIN BA20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[2]}] ;# UG1289 board XDC: user status LED 2, bank 64
set_false_path -to [get_ports {led[*]}]
