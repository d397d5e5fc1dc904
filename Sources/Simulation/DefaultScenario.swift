//! The default scenario, embedded so that `syncsim run` works from any directory.
//! It must equal Data/scenarios/default.json byte for byte (a test checks it).

extension Scenario {
    /// The name under which the embedded default scenario is reported.
    public static let defaultScenarioPath = "Data/scenarios/default.json"

    /// The bytes of Data/scenarios/default.json.
    public static let defaultScenarioJSON: String = #"""
        {
          "name": "default",
          "seed": 1,
          "clientsCount": 1000,
          "partitionsCount": 200,
          "durationSeconds": 86400,
          "workload": {
            "writesPerMinuteOnline": 1.0,
            "writesPerMinuteOffline": 0.2,
            "objectsPerPartition": 1000,
            "keyDistribution": "zipf",
            "zipfExponent": 0.99,
            "erasePercent": 5,
            "addIntegerPercent": 10,
            "listPercent": 10
          },
          "connectivity": {
            "onlineSecondsMean": 1800,
            "offlineSecondsMean": 1800
          },
          "network": {
            "latencyMillisecondsMedian": 80,
            "latencySigma": 0.6,
            "lossPerMillion": 200,
            "reconnectSecondsMin": 1,
            "reconnectSecondsMax": 300
          },
          "clock": {
            "skewMillisecondsMax": 2000
          },
          "server": {
            "backupIntervalSeconds": 21600,
            "clientRecoveryEnabled": true
          },
          "clientReset": {
            "mode": "recoverUnsyncedChanges",
            "manualHandling": "immediately"
          },
          "faults": [
            { "kind": "restoreFromBackup", "atSeconds": 50400 },
            { "kind": "terminateSync", "atSeconds": 72000 }
          ],
          "healing": {
            "secondsMax": 3600
          }
        }

        """#
}
