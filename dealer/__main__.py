from dealer.cli.app import script

script()
