import SyncSimCLI
SyncSimCommand.main()
