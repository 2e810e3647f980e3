import Testing
@testable import MapGateServer

/// The closed door's share of the service's descriptors (decisions/system-mode.md): a quarter of
/// the open-file limit for its connections, whether it answers one socket or two.
@Suite struct MachineClosedDoorTests {
    /// What the door's connections may hold at most: each socket's libmicrohttpd takes its
    /// admitted ones (counted once for all) and a reserve of its own.
    func descriptors(_ settings: HTTPServer.Settings, sockets: Int) -> Int {
        settings.maxConnections + sockets * settings.reserveConnections
    }

    @Test(arguments: [1, 2]) func twoSocketsShareTheQuarterUnderSystemdsLimit(sockets: Int) throws {
        let listener = try HTTPListener(host: "127.0.0.1", port: 0)
        let limit = 1024
        let settings = MachineClosedDoor.settings(for: listener, sockets: sockets, openFileLimit: limit)
        let quarter = (limit - 4 * FileDescriptorLimit.reserve) / 4
        // Before, each of two sockets took the whole quarter: 2 × 192 admitted.
        #expect(settings.maxConnections * sockets <= quarter || settings.maxConnections == 16)
        #expect(descriptors(settings, sockets: sockets) <= quarter + sockets * MachineClosedDoor.reserveConnections)
    }

    @Test func aHighLimitKeepsTheDoorsMost() throws {
        let listener = try HTTPListener(host: "127.0.0.1", port: 0)
        #expect(MachineClosedDoor.settings(for: listener, sockets: 2, openFileLimit: 524_288).maxConnections == MachineClosedDoor.mostConnections)
        #expect(MachineClosedDoor.settings(for: listener, sockets: 2, openFileLimit: 64).maxConnections == 16)
    }
}
