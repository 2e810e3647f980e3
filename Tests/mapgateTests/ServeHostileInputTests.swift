import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Bad input, round three (issue 26), against `mapgate serve` run as a subprocess with real
/// sockets on 127.0.0.1: a FIFO among the fonts, clients that ask for big answers and never
/// read them.
@Suite struct ServeHostileInputTests {
    let workspace: CLIWorkspace
    var work: TemporaryDirectory { workspace.work }
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
    }

    /// Starts `serve` on a free port; its base URL.
    func serve(_ extra: [String] = []) throws -> (BackgroundProcess, String) {
        let server = try mapgate.start(["serve", "--port", "0"] + extra)
        let line = try #require(server.firstLine(), "no output; stderr: \(server.stderr)")
        let base = String(try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }).dropLast())
        return (server, base)
    }

    /// `plain` synced and served, its first tile answered.
    func servingPlain() throws -> (BackgroundProcess, String) {
        try mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "plain"]).status == 0)
        let (server, base) = try serve()
        #expect(try get(base + "/plain/0/0/0.png").status == 200)
        return (server, base)
    }

    func get(_ url: String) throws -> HTTPResponse {
        var request = HTTPRequest(url: url)
        request.totalTimeout = 10
        return try HTTPClient().get(request)
    }

    /// Item 4: `fifo.ttf` (a FIFO) in a folder of `fontPaths` held one server thread in open(2)
    /// for ever: /fonts.json, every glyph and then every tile hung, and SIGTERM no longer stopped
    /// the server. A FIFO is never opened as a font; the real font beside it is served.
    @Test func aFIFOAmongTheFontsHangsNothing() throws {
        let fonts = work.file("fonts")
        try FileManager.default.createDirectory(atPath: fonts, withIntermediateDirectories: true)
        #expect(mkfifo(fonts + "/aaa-fifo.ttf", 0o644) == 0)
        try FileManager.default.copyItem(atPath: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", toPath: fonts + "/DejaVuSans.ttf")
        try mapgate.configure(["catalogURL": workspace.catalogURL, "fontPaths": [fonts]])
        #expect(try mapgate.run(["sync", "plain"]).status == 0)
        let (server, base) = try serve()
        defer { server.signal(SIGKILL) }
        let list = try get(base + "/fonts.json")
        #expect(list.status == 200)
        #expect(String(decoding: list.body, as: UTF8.self).contains("DejaVu Sans Book"))
        #expect(try get(base + "/fonts/DejaVu%20Sans%20Book/0-255.pbf").status == 200)
        #expect(try get(base + "/plain/0/0/0.png").status == 200)
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 5) == 0, "SIGTERM did not stop the server; stderr: \(server.stderr)")
    }

    /// Item 5: each connection got its own copy of the answer's body, held while its client did
    /// not read: 60 clients asking for an 8 MB tile took the server from 22 MB to 531 MB, and
    /// 424 MB stayed after they closed. Unread answers now hold at most the server's budget
    /// (128 MiB; past it 503), and the memory goes back once the clients go.
    @Test func clientsThatNeverReadCannotMakeTheServerHoldGigabytes() throws {
        var tile: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var generator = SystemRandomNumberGenerator()
        tile += (0..<(8 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(tile).write(to: URL(fileURLWithPath: work.file("tile.bin")))
        let big = work.file("big.mbtiles")
        let made = try runProcess("/usr/bin/sqlite3", [big, """
            ATTACH '\(try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"))' AS source;
            CREATE TABLE metadata (name TEXT, value TEXT);
            INSERT INTO metadata SELECT name, value FROM source.metadata WHERE name NOT IN ('format');
            INSERT INTO metadata VALUES ('format', 'png');
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            INSERT INTO tiles SELECT zoom_level, tile_column, tile_row, tile_data FROM source.tiles;
            UPDATE tiles SET tile_data = readfile('\(work.file("tile.bin"))') WHERE zoom_level = 0;
            """])
        #expect(made.status == 0, "sqlite3: \(made.stderr)")
        try workspace.builder.add(id: "big", source: big, format: "png")
        try workspace.builder.write()
        try mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "big"]).status == 0)
        let (server, base) = try serve()
        defer {
            server.signal(SIGTERM)
            _ = server.wait()
        }
        #expect(try get(base + "/big/0/0/0.png").body.count == tile.count)
        let port = try #require(base.split(separator: ":").last.flatMap { UInt16($0) })
        let before = try #require(server.residentBytes)
        var clients: [RawConnection] = []
        for _ in 0..<60 {
            let client = try RawConnection(port: port, timeout: 3)
            client.shrinkReceiveBuffer()
            client.send("GET /big/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            clients.append(client)
        }
        // (30 s: under CI's load, 60 answers of 8 MB took longer than the usual 10.)
        #expect(waitUntil(timeout: 30) { clients.allSatisfy { $0.peekStatus() != nil } }, "not every client was answered")
        let held = try #require(server.residentBytes) - before
        #expect(held < 200 << 20, "60 unread answers of an 8 MB tile hold \(held >> 20) MB")
        let statuses = clients.map { $0.peekStatus() ?? 0 }
        #expect(statuses.contains(200))
        #expect(statuses.contains(503), "\(statuses)")
        clients.removeAll()
        var after = Int.max
        #expect(waitUntil { after = server.residentBytes ?? Int.max; return after < before + (48 << 20) }, "\((after - before) >> 20) MB stayed after the clients closed")
    }

    /// Item 7: a region whose file was cut short while serving was logged `region plain
    /// removed: now 404` and its tiles answered 404, though it was still installed. It is said
    /// to be damaged, with the reason; its tiles are 500 with that reason, and /health lists it.
    @Test func aRegionCutShortWhileServingIsDamagedNotRemoved() throws {
        let (server, base) = try servingPlain()
        defer {
            server.signal(SIGTERM)
            _ = server.wait()
        }
        let path = mapgate.dataDirectory + "/regions/plain.mbtiles"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(truncate(path, off_t(size / 2)) == 0)
        #expect(waitUntil { server.stderr.contains("region plain is damaged") }, "stderr: \(server.stderr)")
        // With the reason: its size against the installed one (the rule `list` and `verify` follow).
        #expect(server.stderr.contains("its size is \(size / 2) bytes, \(size) were installed"), "stderr: \(server.stderr)")
        #expect(!server.stderr.contains("removed"), "stderr: \(server.stderr)")
        let tile = try get(base + "/plain/0/0/0.png")
        #expect(tile.status == 500)
        #expect(String(decoding: tile.body, as: UTF8.self).contains("damaged"))
        let health = try #require(try JSONSerialization.jsonObject(with: try get(base + "/health").body) as? [String: Any])
        #expect(health["status"] as? String == "degraded")
        #expect(health["regions"] as? Int == 0)
        let damaged = try #require(health["damaged"] as? [[String: Any]])
        #expect(damaged.first?["id"] as? String == "plain")
        #expect((damaged.first?["reason"] as? String)?.contains("its size is") == true)
    }

    /// A region's file touched, or copied back as it was, while serving: still the installed file
    /// (its SHA-256 is checked, as its stamp changed), served on and not said to be updated
    /// (found by an attack: "region plain updated: now serving the new file"). A real update is
    /// still said.
    @Test func aTouchedRegionIsNotSaidToBeUpdated() throws {
        let (server, base) = try servingPlain()
        defer {
            server.signal(SIGTERM)
            _ = server.wait()
        }
        let path = mapgate.dataDirectory + "/regions/plain.mbtiles"
        #expect(utimes(path, nil) == 0)
        let copy = work.file("plain.copy")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(rename(copy, path) == 0)
        // The watcher looks every second; a few looks, then the log is read.
        Thread.sleep(forTimeInterval: 3.5)
        #expect(try get(base + "/plain/0/0/0.png").status == 200)
        #expect(!server.stderr.contains("updated"), "stderr: \(server.stderr)")
        #expect(!server.stderr.contains("damaged"), "stderr: \(server.stderr)")
        // A real update is said.
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png", version: "2")
        #expect(try mapgate.run(["sync", "plain"]).status == 0)
        #expect(waitUntil { server.stderr.contains("region plain updated: now serving the new file") }, "stderr: \(server.stderr)")
    }

    /// A FIFO put in place of a region's file (found by an attack: the watcher's open(2) blocked
    /// for good, so no later change was seen and SIGTERM left the server answering; a server
    /// started beside one never answered) and a file edited in place (served as "updated") are
    /// damaged, by the rule `list` and `verify` follow, before SQLite opens them.
    @Test func aFIFOOrAnEditedFileInARegionsPlaceIsDamaged() throws {
        try workspace.offer("other", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "plain", "other"]).status == 0)
        let path = mapgate.dataDirectory + "/regions/plain.mbtiles"
        let saved = work.file("plain.saved")
        try FileManager.default.copyItem(atPath: path, toPath: saved)
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o644) == 0)
        do {
            // Started beside the FIFO: it answers, and says why plain is not served.
            let (server, base) = try serve()
            #expect(try get(base + "/other/0/0/0.png").status == 200)
            #expect(try get(base + "/plain/0/0/0.png").status == 500)
            // An edit of the other region's file in place is seen as damage, not an update.
            let other = mapgate.dataDirectory + "/regions/other.mbtiles"
            let edited = try runProcess("/usr/bin/sqlite3", [other, "UPDATE metadata SET value = 'Edited' WHERE name = 'name'"])
            #expect(edited.status == 0, "\(edited.stderr)")
            #expect(waitUntil { server.stderr.contains("region other is damaged") }, "stderr: \(server.stderr)")
            #expect(server.stderr.contains("its SHA-256 is"), "stderr: \(server.stderr)")
            #expect(try get(base + "/other/0/0/0.png").status == 500)
            server.signal(SIGTERM)
            let stopped = waitUntil(timeout: 10) { !server.isRunning }
            #expect(stopped, "SIGTERM did not stop the server; stderr: \(server.stderr)")
            if !stopped { server.signal(SIGKILL) }
            _ = server.wait()
        }
        // Put in place after the watcher's look and before any worker opened it (found by the next
        // attack: the worker's open blocked for good, then every thread, and SIGTERM with them):
        // nothing blocks, and the worker reads the file the watcher checked (``HeldFile``), or,
        // once the watcher has seen the FIFO, answers 500.
        do {
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: saved, toPath: path)
            let (server, base) = try serve()
            try FileManager.default.removeItem(atPath: path)
            #expect(mkfifo(path, 0o644) == 0)
            var request = HTTPRequest(url: base + "/plain/0/0/0.png")
            request.totalTimeout = 5
            #expect([200, 500].contains(try HTTPClient().get(request).status))
            #expect(try get(base + "/other/0/0/0.png").status != 0)
            server.signal(SIGTERM)
            let stopped = waitUntil(timeout: 10) { !server.isRunning }
            #expect(stopped, "SIGTERM did not stop the server; stderr: \(server.stderr)")
            if !stopped { server.signal(SIGKILL) }
            _ = server.wait()
        }
        // Put in place while serving: seen within the watcher's second, and the server stops.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: saved, toPath: path)
        let (server, base) = try serve()
        #expect(try get(base + "/plain/0/0/0.png").status == 200)
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o644) == 0)
        #expect(waitUntil { server.stderr.contains("region plain is damaged") }, "stderr: \(server.stderr)")
        server.signal(SIGTERM)
        let stopped = waitUntil(timeout: 10) { !server.isRunning }
        #expect(stopped, "SIGTERM did not stop the server; stderr: \(server.stderr)")
        if !stopped { server.signal(SIGKILL) }
        _ = server.wait()
    }
    /// Another MBTiles file swapped into a region's place after the watcher's look, read by a
    /// worker, then put back before the next look (found by an attack): the worker kept the
    /// swapped-in file and served its tiles as the region's until the server stopped. The workers
    /// open the file the watcher checked and holds (``HeldFile``), whatever the path names.
    @Test func aFileSwappedInAndPutBackIsNeverServed() throws {
        try mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "plain"]).status == 0)
        let path = mapgate.dataDirectory + "/regions/plain.mbtiles"
        let aside = work.file("plain.aside")
        let stranger = work.file("stranger.mbtiles")
        let source = try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles")
        let strangerTile = try runProcess("/usr/bin/sqlite3", [source, "SELECT hex(tile_data) FROM tiles WHERE zoom_level = 0"]).stdout
        let plainTile = try runProcess("/usr/bin/sqlite3", [path, "SELECT hex(tile_data) FROM tiles WHERE zoom_level = 0"]).stdout
        #expect(!strangerTile.isEmpty && !plainTile.isEmpty && strangerTile != plainTile)
        func hex(_ data: Data) -> String { data.map { String(format: "%02X", $0) }.joined() + "\n" }
        let (server, base) = try serve()
        defer {
            server.signal(SIGTERM)
            _ = server.wait()
        }
        var answers: [(status: Int, body: String)] = []
        for _ in 0..<3 {
            try FileManager.default.copyItem(atPath: source, toPath: stranger)
            #expect(rename(path, aside) == 0)
            #expect(rename(stranger, path) == 0)
            // Fresh connections, so that each worker is asked.
            for _ in 0..<6 {
                let answer = try get(base + "/plain/0/0/0.png")
                answers.append((answer.status, hex(answer.body)))
            }
            #expect(rename(aside, path) == 0)
            for _ in 0..<6 {
                let answer = try get(base + "/plain/0/0/0.png")
                answers.append((answer.status, hex(answer.body)))
            }
        }
        // Each answer is the region's tile, or 500 while the watcher saw the stranger in its place.
        #expect(!answers.contains { $0.body == strangerTile }, "the swapped-in file's tile was served")
        #expect(answers.allSatisfy { $0.status == 500 || ($0.status == 200 && $0.body == plainTile) }, "\(answers.map(\.status))")
        #expect(answers.contains { $0.status == 200 })
        // Put back, it is served on (once the watcher has looked again, if it saw the stranger).
        #expect(waitUntil { (try? get(base + "/plain/0/0/0.png").status) == 200 })
        for _ in 0..<6 { #expect(hex(try get(base + "/plain/0/0/0.png").body) == plainTile) }
    }
}
