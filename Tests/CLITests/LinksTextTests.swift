//! The `links:` line `syncsim run` prints when a scenario limits a bandwidth.

import Simulation
import Testing

@testable import SyncSimCLI

@Suite struct LinksTextTests {
    @Test func theLineNamesEachLimitAndOnlyAppearsWithOne() {
        var scenario = Scenario()
        #expect(RunCommand.linksText(scenario) == nil)
        scenario.server.egressBytesPerSecond = 1_000
        #expect(
            RunCommand.linksText(scenario)
                == "links: server egress 1000 B/s, each client connection unlimited")
        scenario.network.bandwidthBytesPerSecond = 250
        #expect(
            RunCommand.linksText(scenario)
                == "links: server egress 1000 B/s, each client connection 250 B/s")
        scenario.server.egressBytesPerSecond = 0
        #expect(
            RunCommand.linksText(scenario)
                == "links: server egress unlimited, each client connection 250 B/s")
    }
}
