from dealer.cli.app import main

main()
