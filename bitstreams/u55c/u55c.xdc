# Alveo U55C pins and clocks for mrc_alveo_top.
# Source of every pin: UG1469 (Alveo U55C user guide) and its board XDC;
# each pin below was found in two independent public U55C designs
# (Corundum-family fpga/mqnic U55C XDC and DouglasWWolf/u55c_smem). GT
# serial pins are placed by the IPs' GT location settings (board.tcl).

set_property CFGBVS GND                              [current_design] ;# UG1469 board XDC
set_property CONFIG_VOLTAGE 1.8                      [current_design] ;# UG1469 board XDC
set_property BITSTREAM.GENERAL.COMPRESS TRUE         [current_design] ;# size only
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4         [current_design] ;# UG1469: quad SPI flash

# PCIe reference clock for x16 (100 MHz from the host) on quad 225
set_property PACKAGE_PIN AR15 [get_ports pcie_refclk_p] ;# UG1469 board XDC: Bank 225 MGTREFCLK0P_225 (x16 / lanes 8-15)
set_property PACKAGE_PIN AR14 [get_ports pcie_refclk_n] ;# UG1469 board XDC: Bank 225 MGTREFCLK0N_225
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p] ;# UG1469: PCIe reference clock 100 MHz

# PCIe reset (PERST#, active low), bank 65 at 1.8 V
set_property PACKAGE_PIN BF41 [get_ports pcie_perst_n] ;# UG1469 board XDC: Bank 65 IO_T3U_N12_PERSTN0_65 (PCIE_PERST_LS_65)
set_property IOSTANDARD LVCMOS18 [get_ports pcie_perst_n] ;# UG1469 board XDC: bank 65 VCCO 1.8 V
set_property PULLUP true [get_ports pcie_perst_n] ;# keeps the core in reset when undriven
set_false_path -from [get_ports pcie_perst_n]

# QSFP0 reference clock: SI5394 OUT0, 161.1328125 MHz, MGTREFCLK0 of quad 130
set_property PACKAGE_PIN AD42 [get_ports qsfp0_refclk_p] ;# UG1469 board XDC: Bank 130 MGTREFCLK0P_130 (SI5394 OUT0)
set_property PACKAGE_PIN AD43 [get_ports qsfp0_refclk_n] ;# UG1469 board XDC: Bank 130 MGTREFCLK0N_130 (SI5394 OUT0)
create_clock -period 6.206 -name qsfp0_refclk [get_ports qsfp0_refclk_p] ;# UG1469: QSFP0 reference 161.1328125 MHz

# HBM catastrophic temperature flag to the satellite controller (driven 0)
set_property -dict {PACKAGE_PIN BE45 IOSTANDARD LVCMOS18} [get_ports hbm_cattrip] ;# UG1469 board XDC: Bank 65 IO_L22P_T3U_N6_DBC_AD0P_D04_65 (HBM_CATTRIP_LS)
set_property PULLDOWN true [get_ports hbm_cattrip] ;# a floating CATTRIP would shut the card down
set_false_path -to [get_ports hbm_cattrip]

# QSFP0 LEDs (bank 68, 1.8 V): led[0] PCIe link on the activity LED,
# led[1] CMAC aligned on the green link LED, led[2] RX overrun on yellow
set_property -dict {PACKAGE_PIN BL13 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 8} [get_ports {led[0]}] ;# UG1469 board XDC: QSFP28_0_ACTIVITY_LED, Bank 68
set_property -dict {PACKAGE_PIN BK11 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 8} [get_ports {led[1]}] ;# UG1469 board XDC: QSFP0 link status LED (green), Bank 68
set_property -dict {PACKAGE_PIN BJ11 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 8} [get_ports {led[2]}] ;# UG1469 board XDC: QSFP0 link status LED (yellow), Bank 68
set_false_path -to [get_ports {led[*]}]
