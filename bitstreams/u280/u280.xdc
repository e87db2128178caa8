# Alveo U280 pins and clocks for mrc_alveo_top.
# Source of every pin: UG1314 (Alveo U280 user guide) and the board XDC
# published with it (alveo-u280-xdc.xdc); cross-checked against
# Corundum's fpga/mqnic/AU280 XDC. GT serial pins are placed by the IPs'
# GT location settings (board.tcl).
# Not constrained: user LEDs. TODO (UG1314 "Status LEDs"/board XDC): no
# FPGA-driven LED pin could be confirmed, so the top is built with
# MRC_NO_LEDS and has no led port on this card.

set_property CFGBVS GND                              [current_design] ;# UG1314 board XDC
set_property CONFIG_VOLTAGE 1.8                      [current_design] ;# UG1314 board XDC
set_property BITSTREAM.GENERAL.COMPRESS TRUE         [current_design] ;# size only
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4         [current_design] ;# UG1314: quad SPI flash

# PCIe reference clock for Gen3 x16 (PCIE_CLK1, 100 MHz from the host)
set_property PACKAGE_PIN AR15 [get_ports pcie_refclk_p] ;# UG1314 board XDC: Bank 225 MGTREFCLK0P_225 (PCIE_CLK1_P)
set_property PACKAGE_PIN AR14 [get_ports pcie_refclk_n] ;# UG1314 board XDC: Bank 225 MGTREFCLK0N_225 (PCIE_CLK1_N)
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p] ;# UG1314 board XDC: pcie_ref_clk1, 100 MHz

# PCIe reset (PCIE_PERST, active low)
set_property PACKAGE_PIN BH26 [get_ports pcie_perst_n] ;# UG1314 board XDC: Bank 67 IO_L13P_T2L_N0_GC_QBC_67 (PCIE_PERST), VCCO 1.8 V
set_property IOSTANDARD LVCMOS18 [get_ports pcie_perst_n] ;# UG1314 board XDC
set_property PULLUP true [get_ports pcie_perst_n] ;# keeps the core in reset when undriven
set_false_path -from [get_ports pcie_perst_n]

# QSFP0 reference clock (QSFP0_CLOCK on MGTREFCLK1 of quad 134;
# QSFP0_FS = 0 selects 161.132812 MHz, QSFP0_OEB low enables it)
set_property PACKAGE_PIN R40 [get_ports qsfp0_refclk_p] ;# UG1314 board XDC: Bank 134 MGTREFCLK1P_134 (QSFP0_CLOCK_P)
set_property PACKAGE_PIN R41 [get_ports qsfp0_refclk_n] ;# UG1314 board XDC: Bank 134 MGTREFCLK1N_134 (QSFP0_CLOCK_N)
create_clock -period 6.206 -name qsfp0_refclk [get_ports qsfp0_refclk_p] ;# UG1314 board XDC: gt0refclk1, 161.132812 MHz
set_property -dict {PACKAGE_PIN G32 IOSTANDARD LVCMOS18} [get_ports qsfp0_refclk_fs]   ;# UG1314 board XDC: Bank 75 IO_L9N_T1L_N5_AD12N_75 (QSFP0_FS)
set_property -dict {PACKAGE_PIN H32 IOSTANDARD LVCMOS18} [get_ports qsfp0_refclk_oe_b] ;# UG1314 board XDC: Bank 75 IO_L9P_T1L_N4_AD12P_75 (QSFP0_OEB)
set_false_path -to [get_ports {qsfp0_refclk_fs qsfp0_refclk_oe_b}]

# HBM catastrophic temperature flag to the satellite controller (driven 0)
set_property -dict {PACKAGE_PIN D32 IOSTANDARD LVCMOS18} [get_ports hbm_cattrip] ;# UG1314 board XDC: Bank 75 IO_L17P_T2U_N8_AD10P_75 (HBM_CATTRIP)
set_property PULLDOWN true [get_ports hbm_cattrip] ;# UG1314 board XDC
set_false_path -to [get_ports hbm_cattrip]
