from tracemine.cli import main

main()
