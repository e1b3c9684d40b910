from policyctl.cli.main import main

raise SystemExit(main())
