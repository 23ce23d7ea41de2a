func runDaemon(configPath: String) -> Int32 { 1 }
