"""Everything that touches hardware: transports, the dealing-machine driver, the camera scanner, the simulator."""
