import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// System mode (issue 36): the service, run as a uid of its own, keeps the machine's maps and gate;
/// users' commands are its clients. Needs root (to be several uids), as CI runs the tests.
@Suite(.enabled(if: geteuid() == 0, "needs root to run the service and users as uids of their own"))
struct SystemModeTests {
    let machine: SystemMachine
    let administrator = SystemMachine.administrator
    let user = SystemMachine.user
    let during = "2027-02-05 00:00:00"

    init() throws {
        machine = try SystemMachine()
        try machine.publish(version: "1.4.0")
        try machine.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
    }

    /// The service's gate prompting: `plain` installed on 2027-01-01, the store then saying 1.5.0,
    /// and the service's clock past the grace.
    func startPrompting(environment: [String: String] = [:]) throws {
        try machine.startService(at: "2027-01-01 00:00:00")
        #expect(try machine.run(["sync", "plain"], as: 0).status == 0)
        try machine.publish(version: "1.5.0")
        #expect(try machine.run(["check"], as: 0).status == 0)
        try machine.startService(at: during, environment: environment)
    }

    /// The HTTP status `url` answers with (curl's `%{http_code}`, `000` when none came), waiting at
    /// most `seconds`.
    func status(of url: String, within seconds: Int) throws -> String {
        try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "\(seconds)", "-w", "%{http_code}", url]).stdout
    }

    /// The service's clock: the real one plus an offset read from a file (libfaketime), read by
    /// the service and by every process it starts, as on a machine with one clock.
    struct MovableClock {
        let file: String
        /// The offset when the service started: its clock said `during`.
        let offset: Double

        /// Moves the clock on so that `seconds` of its time have passed since `start`, a real time.
        func pass(_ seconds: Double, since start: Double) throws {
            try set(offset + seconds - (Date().timeIntervalSince1970 - start))
        }

        func set(_ offset: Double) throws {
            try Data("+\(Int(offset))\n".utf8).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o644)
        }
    }

    /// The service, its gate prompting (``startPrompting(environment:)``), restarted on a
    /// ``MovableClock`` that says `during` now and looking at its gate every half second.
    func startOnAMovableClock() throws -> MovableClock {
        try startPrompting()
        let during = 1_801_785_600.0  // 2027-02-05 00:00:00 UTC
        let clock = MovableClock(file: machine.work.file("service-clock"), offset: during - Date().timeIntervalSince1970)
        try clock.set(clock.offset)
        try startService(on: clock)
        return clock
    }

    /// (Re)starts the service on `clock`, looking at its gate every half second.
    func startService(on clock: MovableClock) throws {
        try machine.startService(
            environment: ["MAPGATE_GATE_REFRESH_SECONDS": "0.5"],
            inner: [
                "/usr/bin/env", "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "FAKETIME_TIMESTAMP_FILE=\(clock.file)",
                "FAKETIME_NO_CACHE=1", "FAKETIME_DISABLE_SHM=1",
            ])
    }

    /// The command this machine's service runs whose arguments start with `arguments` (other
    /// suites run commands of their own): its children, those of every thread (the service starts
    /// commands from its connections' threads).
    func serviceCommand(startingWith arguments: [String]) -> pid_t? {
        let prefix = (["mapgate"] + arguments).map { $0 + "\0" }.joined()
        var pending = machine.service.map { [$0.processIdentifier] } ?? []
        while let pid = pending.popLast() {
            let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline").map { String(decoding: $0, as: UTF8.self) } ?? ""
            if line.hasPrefix(prefix) { return pid }
            for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
                let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
                pending += children.split(separator: " ").compactMap { pid_t($0) }
            }
        }
        return nil
    }

    func homeIsEmpty(_ uid: uid_t) -> Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: machine.work.file("home-\(uid)"))) ?? []).isEmpty
    }

    /// An administrator installs a region through the service; any user lists it and reads a
    /// tile; the maps are the service's, and no user gets a file of mapgate's in their home.
    @Test func usersAreClientsOfTheService() throws {
        try machine.startService()
        let sync = try machine.run(["sync", "plain"], as: administrator)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(FileManager.default.fileExists(atPath: machine.serviceData + "/regions/plain.mbtiles"))
        let list = try machine.run(["list"], as: user)
        #expect(list.status == 0 && list.stdout.contains("plain"), "\(list.stdout) \(list.stderr)")
        // tile -o: the file is the user's, written from the service's bytes.
        let target = machine.work.file("home-\(user)/tile.png")
        let tile = try machine.run(["tile", "plain", "0", "0", "0", "-o", target], as: user)
        #expect(tile.status == 0, "\(tile.stderr)")
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_uid == user, "the tile file belongs to the user who asked")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: target))
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG tile")
        try FileManager.default.removeItem(atPath: target)
        #expect(homeIsEmpty(user) && homeIsEmpty(administrator), "system mode writes nothing of mapgate's into a user's home")
        let status = try machine.run(["status", "--json"], as: user)
        #expect(try MapGateBinary.json(status.stdout)["mode"] as? String == "system", "\(status.stdout) \(status.stderr)")
    }

    /// The machine's catalog credentials go with every catalog and package request the service
    /// makes, never to the store; a file other users may read is refused, not used.
    @Test func catalogCredentialsGoOnlyToThePublisher() throws {
        let path = machine.serviceFolder + "/credentials"
        try Data(#"{"authorization": "Bearer machine-7"}"#.utf8).write(to: URL(fileURLWithPath: path))
        chown(path, SystemMachine.serviceUID, SystemMachine.serviceUID)
        chmod(path, 0o600)
        try machine.writePolicy(["credentialsFile": path])
        try machine.startService()
        #expect(try machine.run(["check"], as: 0).status == 0)
        let sync = try machine.run(["sync", "plain"], as: administrator)
        #expect(sync.status == 0, "\(sync.stderr)")
        let hits = machine.origin.requests
        let publisher = hits.filter { $0.path.hasSuffix("catalog.json") || $0.path.contains("packages/") }
        #expect(!publisher.isEmpty)
        #expect(publisher.allSatisfy { $0.authorization == "Bearer machine-7" }, "\(publisher.map { ($0.path, $0.authorization) })")
        let lookups = hits.filter { $0.path.hasSuffix("lookup.json") }
        #expect(!lookups.isEmpty && lookups.allSatisfy { $0.authorization == nil }, "the store never gets the publisher's credentials")
        // The user's own process never reads them: it cannot (0600, the service's).
        #expect(try machine.run(["list"], as: user).status == 0)
        chmod(path, 0o644)
        let exposed = try machine.run(["sync", "plain"], as: administrator)
        #expect(exposed.status == 64, "\(exposed.stderr)")
        #expect(exposed.stderr.contains("other users may read it"), "\(exposed.stderr)")
    }

    /// Changing the machine's maps is for root and the administrators' group; everybody views.
    @Test func onlyAdministratorsChangeTheMaps() throws {
        try machine.startService()
        let refused = try machine.run(["sync", "plain"], as: user)
        #expect(refused.status == 1, "\(refused.stderr)")
        // The group the service was started with (`--admin-group 64100`), not the default's name.
        #expect(refused.stderr.contains("only root and members of the group \(SystemMachine.administratorsGroup) "), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: machine.serviceData + "/regions/plain.mbtiles"))
        let root = try machine.run(["sync", "plain"], as: 0)
        #expect(root.status == 0, "\(root.stderr)")
        let remove = try machine.run(["remove", "plain"], as: user)
        #expect(remove.status == 1, "\(remove.stderr)")
        let removed = try machine.run(["remove", "plain"], as: administrator)
        #expect(removed.status == 0, "\(removed.stderr)")
    }

    /// Moving a machine to system mode keeps what a user installed: their mirror (`mapgate mirror`,
    /// written before the switch) is read by `sync --from DIR` through the service, the folder
    /// opened by the administrator's own process and checked against the publisher's signed
    /// catalog as any mirror is; nothing is downloaded. A user outside the group may not, and a
    /// folder the caller cannot open is the caller's error.
    @Test func aUsersRegionsAreAdoptedFromTheirMirror() throws {
        let (stick, before) = try mirrorMadeBeforeTheSwitch()
        try machine.startService()
        machine.origin.clearRequests()
        let refused = try machine.run(["sync", "--from", stick, "plain"], as: user)
        #expect(refused.status == 1 && refused.stderr.contains("group \(SystemMachine.administratorsGroup) "), "\(refused.stderr)")
        chmod(stick, 0o700)
        let unreadable = try machine.run(["sync", "--from", stick, "plain"], as: administrator)
        #expect(unreadable.status == 64 && unreadable.stderr.contains("permission denied"), "\(unreadable.stderr)")
        // A folder only the administrator may enter, its files theirs alone, as on a FAT32 stick
        // the desktop mounted for its user (found by an attack: the service, which read the folder
        // itself, could not, and `chmod` does nothing there): the administrator's own process
        // opens its files for the service.
        try Self.makeOwnerOnly(stick, owner: administrator)
        // A client that passes the folder itself (an older mapgate) is told the service cannot.
        let told = try askPassingTheFolder(stick)
        #expect(told.code == 74 && told.stderr.contains("cannot be read by the map service") && !told.stderr.contains("/proc/self"), "\(told)")
        let adopted = try machine.run(["sync", "--from", stick, "plain"], as: administrator)
        #expect(adopted.status == 0, "\(adopted.stdout) \(adopted.stderr)")
        let original = FileManager.default.contents(atPath: before.dataDirectory + "/regions/plain.mbtiles")
        #expect(original != nil && FileManager.default.contents(atPath: machine.serviceData + "/regions/plain.mbtiles") == original)
        #expect(machine.origin.requests.filter { $0.path.contains("packages/") }.isEmpty, "nothing was downloaded")
        // Named by the caller's path, never the descriptor's (found by an attack: `list` said
        // "mirror /proc/self/fd/3", and so did every message).
        let listed = try machine.run(["list", "--json"], as: administrator)
        #expect(listed.stdout.contains(MirrorLayout.fileURL(stick) + "/packages/") && !listed.stdout.contains("/proc/self"), "\(listed.stdout)")
        // A folder that holds no mirror says what is missing, with the system's reason (found by an
        // attack: "a part of the path is not a folder").
        let empty = machine.work.file("empty-stick")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let nothing = try machine.run(["sync", "--from", empty, "plain"], as: 0)
        #expect(nothing.status == 74 && nothing.stderr.contains(empty + "/catalog.json: no such file"), "\(nothing.stderr)")

        // The caller's process opens nothing through a link, nor a FIFO: a stick made by someone
        // else cannot make root hand the service a file of root's, nor hang the run.
        #expect(try machine.run(["remove", "plain"], as: administrator).status == 0)
        let package = try #require(try FileManager.default.contentsOfDirectory(atPath: stick + "/packages").first { $0.isSHA256Hex })
        let secret = machine.work.file("root-only-secret")
        try Data("root's secret\n".utf8).write(to: URL(fileURLWithPath: secret))
        chmod(secret, 0o600)
        try FileManager.default.moveItem(atPath: stick + "/packages/" + package, toPath: machine.work.file("kept-package"))
        try FileManager.default.createSymbolicLink(atPath: stick + "/packages/" + package, withDestinationPath: secret)
        let linked = try machine.run(["sync", "--from", stick, "plain"], as: 0)
        #expect(linked.status == 65 && linked.stderr.contains("symbolic link: refused"), "\(linked.stderr)")
        #expect(linked.stderr.contains(stick + "/packages/" + package) && !linked.stderr.contains("/proc/self"), "\(linked.stderr)")
        try FileManager.default.removeItem(atPath: stick + "/packages/" + package)
        #expect(mkfifo(stick + "/packages/" + package, 0o600) == 0)
        let piped = try machine.run(["sync", "--from", stick, "plain"], as: 0)
        #expect(piped.status == 65 && piped.stderr.contains("not a regular file"), "\(piped.stderr)")
        let partial = (try? FileManager.default.contentsOfDirectory(atPath: machine.serviceData + "/partial")) ?? []
        for name in partial {
            #expect(FileManager.default.contents(atPath: machine.serviceData + "/partial/" + name).map { !String(decoding: $0, as: UTF8.self).contains("root's secret") } ?? true)
        }
        try FileManager.default.removeItem(atPath: stick + "/packages/" + package)
        try FileManager.default.moveItem(atPath: machine.work.file("kept-package"), toPath: stick + "/packages/" + package)
        // The packages folder itself a link (found by an attack: "a part of the path is not a folder", 74).
        try FileManager.default.moveItem(atPath: stick + "/packages", toPath: stick + "/elsewhere")
        try FileManager.default.createSymbolicLink(atPath: stick + "/packages", withDestinationPath: "elsewhere")
        let folderLinked = try machine.run(["sync", "--from", stick, "plain"], as: 0)
        #expect(folderLinked.status == 65 && folderLinked.stderr.contains("symbolic link: refused"), "\(folderLinked.stderr)")
        try FileManager.default.removeItem(atPath: stick + "/packages")
        try FileManager.default.moveItem(atPath: stick + "/elsewhere", toPath: stick + "/packages")
        #expect(try machine.run(["sync", "--from", stick, "plain"], as: 0).status == 0)
    }

    /// Before the switch to system mode: a per-user machine (root's own policy, without "mode")
    /// syncs `plain` from a catalog `mapgate publish` signed and mirrors it into `stick`; then the
    /// machine's policy (system mode) trusts the publisher's key.
    func mirrorMadeBeforeTheSwitch() throws -> (stick: String, before: MapGateBinary) {
        let key = try PublisherKey(in: machine.work.path)
        let inbox = machine.work.file("in")
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), toPath: inbox + "/plain.mbtiles")
        try FileManager.default.createDirectory(atPath: machine.work.file("before"), withIntermediateDirectories: true)
        let before = try MapGateBinary(workDirectory: machine.work.file("before"))
        try before.writePolicy(["trustedKeys": [try key.publicKeyLine], "requireSignedCatalog": true])
        try before.writeConfig(["catalogURL": machine.catalogURL])
        let published = try before.run(["publish", inbox, "--out", machine.work.file("www"), "--key", key.secretKeyFile, "--expires-days", "400"])
        #expect(published.status == 0, "\(published.stderr)")
        #expect(try before.run(["sync", "plain"]).status == 0)
        let stick = machine.work.file("stick")
        let mirrored = try before.run(["mirror", stick])
        #expect(mirrored.status == 0, "\(mirrored.stdout) \(mirrored.stderr)")
        try machine.writePolicy(["trustedKeys": [try key.publicKeyLine], "requireSignedCatalog": true])
        return (stick, before)
    }

    /// Every folder under `path` only `owner` may enter, every file only theirs to read.
    static func makeOwnerOnly(_ path: String, owner: uid_t) throws {
        for item in [path] + (FileManager.default.subpaths(atPath: path) ?? []).map({ path + "/" + $0 }) {
            var info = stat()
            guard lstat(item, &info) == 0 else { continue }
            #expect(lchown(item, owner, owner) == 0)
            if info.st_mode & S_IFMT != S_IFLNK { chmod(item, info.st_mode & S_IFMT == S_IFDIR ? 0o700 : 0o600) }
        }
    }

    /// A request as an older mapgate made it: `sync --from` with the folder itself as descriptor 3.
    func askPassingTheFolder(_ folder: String) throws -> (code: Int32?, stderr: String) {
        let errors = machine.work.file("old-client.stderr")
        let null = open("/dev/null", O_RDWR)
        let stderr = open(errors, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { [null, stderr, directory].forEach { close($0) } }
        let client = try SystemClient.connect(to: machine.socketPath, policy: machine.policyPath)
        try client.send(SystemRequest(arguments: ["sync", "--from", SystemAccess.passedFolder, "plain"], environment: [:]), streams: [null, null, stderr, directory])
        let reply = try client.reply()
        return (reply.exitCode, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }

    /// A caller whose process stops answering the service's `sync --from DIR` (a hand-made client
    /// that serves the catalog, then never a package; found by an attack: the service's command
    /// waited for ever, holding the data directory's lock and the gate's use): the command gives
    /// up after its limit (120 s; 2 s here), says why (74), and nothing is counted or kept locked.
    @Test func aCallerThatStopsAnsweringHoldsNothingForLong() throws {
        let (stick, _) = try mirrorMadeBeforeTheSwitch()
        try startPrompting(environment: ["MAPGATE_PASSED_FOLDER_TIMEOUT": "2"])
        #expect(try machine.run(["remove", "plain"], as: 0).status == 0)
        let before = try machine.promptsShown()
        let (ours, theirs) = try LocalSocket.pair(name: stick)
        let hung = DispatchSemaphore(value: 0)
        let host = Thread {
            // The protocol as PassedFolderHost speaks it (JSON of PassedFolderRequest and Answer).
            func answer(_ object: [String: Any], descriptor: Int32? = nil) {
                guard let body = try? JSONSerialization.data(withJSONObject: object) else { return }
                try? ours.send(body, descriptors: descriptor.map { [$0] } ?? [])
            }
            while let message = try? ours.receive(limit: 1 << 20, maximumDescriptors: 0, timeout: 60),
                let request = try? JSONSerialization.jsonObject(with: message.body) as? [String: Any]
            {
                if request["path"] != nil {
                    answer(["path": ["_0": stick]])
                } else if let name = (request["status"] as? [String: Any])?["name"] as? String {
                    var info = stat()
                    guard lstat(stick + "/" + name, &info) == 0 else {
                        answer(["failed": ["code": errno]])
                        continue
                    }
                    answer(["status": ["_0": ["mode": Int(info.st_mode), "size": Int(info.st_size)]]])
                } else if let name = (request["open"] as? [String: Any])?["name"] as? String {
                    if name.hasPrefix("packages/") {
                        hung.signal()
                        _ = ours.receiveByte()  // never answers: waits for the other end to close
                        return
                    }
                    let descriptor = open(stick + "/" + name, O_RDONLY | O_CLOEXEC)
                    answer(["opened": [String: Any]()], descriptor: descriptor)
                    close(descriptor)
                }
            }
        }
        host.start()
        let null = open("/dev/null", O_RDWR)
        let errors = machine.work.file("silent.stderr")
        let stderr = open(errors, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
        defer { [null, stderr].forEach { close($0) } }
        let client = try SystemClient.connect(to: machine.socketPath, policy: machine.policyPath)
        try client.send(
            SystemRequest(arguments: ["sync", "--from", SystemAccess.passedFolder, "plain"], environment: [:]),
            streams: [null, null, stderr, theirs.fileDescriptor])
        let started = Date()
        let reply = try client.reply()
        let told = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(hung.wait(timeout: .now()) == .success, "the service asked for the package: \(told)")
        #expect(reply.exitCode == 74 && told.contains("no answer in time"), "\(String(describing: reply)) \(told)")
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(try machine.promptsShown() == before, "\(told)")
        let again = try machine.run(["sync", "--from", stick, "plain"], as: 0)
        #expect(again.status == 0, "the lock is free, the use there: \(again.stderr)")
        withExtendedLifetime(theirs) {}
    }

    /// Options that would make the service read or write a place the caller names are refused
    /// (exit 64) before anything runs; another address for the tile server is the administrators'.
    @Test(arguments: [
        ["list", "--data-dir", "/tmp"], ["--config", "/tmp/c.json", "status"],
        ["serve", "--share", "/tmp"], ["open", "plain", "--browser"],
    ])
    func optionsThatNameFilesAreRefused(_ arguments: [String]) throws {
        try machine.startService()
        let result = try machine.run(arguments, as: administrator)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("system mode"), "\(result.stderr)")
    }

    /// A client of its own (not mapgate) that names a folder for the service to read, or passes a
    /// descriptor that is not a folder, is refused: the service reads only what the caller opened.
    @Test func aHandMadeRequestCannotNameAFolder() throws {
        try machine.startService()
        let null = open("/dev/null", O_RDWR)
        defer { close(null) }
        func ask(_ arguments: [String], descriptors: [Int32]) throws -> SystemReply {
            let client = try SystemClient.connect(to: machine.socketPath, policy: machine.policyPath)
            try client.send(SystemRequest(arguments: arguments, environment: [:]), streams: descriptors)
            return try client.reply()
        }
        #expect(try ask(["sync", "--from", "/tmp", "plain"], descriptors: [null, null, null]).refusal == SystemRefusal(.option, "from"))
        #expect(try ask(["sync", "--from", SystemAccess.passedFolder, "plain"], descriptors: [null, null, null]).refusal == SystemRefusal(.option, "from"))
        #expect(try ask(["sync", "--from", SystemAccess.passedFolder, "plain"], descriptors: [null, null, null, null]).refusal?.reason == .request, "a fourth descriptor that is not a folder")
        #expect(try ask(["list"], descriptors: [null, null]).refusal?.reason == .request)
        // Found by an attack: a NUL in an argument made the line fail to parse here, and it was run
        // unchecked, started with the argument cut at the NUL (`list --quiet --data-dir /tmp`).
        #expect(try ask(["list", "--quiet\u{0}", "--data-dir", "/tmp"], descriptors: [null, null, null]).refusal?.reason == .request)
        #expect(try ask(["list", "--frobnicate", "--data-dir", "/tmp"], descriptors: [null, null, null]).refusal?.reason == .request)
        #expect(try ask(["list", "", "--data-dir", "/tmp"], descriptors: [null, null, null]).refusal?.reason == .request)
    }

    /// An administrator's `mirror DIR` is written into DIR by their own process, with their rights,
    /// from the packages the service makes: the files are theirs, a second run keeps what is there,
    /// and another machine syncs from it. Others may not hand the machine's maps over (exit 1), and
    /// a request without the writing socket is refused.
    @Test func anAdministratorsMirrorIsWrittenByTheirOwnProcess() throws {
        // A package the mirror can carry byte for byte (the builder's gzip is not publish's).
        try machine.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png", gzip: false)
        try machine.startService()
        #expect(try machine.run(["sync", "plain"], as: 0).status == 0)
        let folder = machine.work.file("home-\(administrator)/stick")
        let written = try machine.run(["mirror", folder], as: administrator)
        #expect(written.status == 0, "\(written.stdout) \(written.stderr)")
        #expect(written.stdout.contains("written"), "\(written.stdout) \(written.stderr)")
        let catalog = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: machine.work.file("www/catalog.json")))) as? [String: Any]
        let sha256 = ((catalog?["regions"] as? [[String: Any]])?.first?["sha256"] as? String) ?? "?"
        for name in ["catalog.json", "mirror.json", "packages/" + sha256] {
            var info = stat()
            #expect(stat(folder + "/" + name, &info) == 0 && info.st_uid == administrator, "\(name) is not the administrator's")
        }
        #expect(try SHA256Hasher.hex(ofFileAt: folder + "/packages/" + sha256) == sha256)
        let packages = try FileManager.default.contentsOfDirectory(atPath: folder + "/packages")
        #expect(packages == [sha256], "nothing but the package: \(packages)")
        let partial = (try? FileManager.default.contentsOfDirectory(atPath: machine.serviceData + "/partial")) ?? []
        #expect(partial.isEmpty, "the service kept its copies: \(partial)")
        let again = try machine.run(["mirror", folder], as: administrator)
        #expect(again.status == 0 && again.stdout.contains("already in the mirror"), "\(again.stdout) \(again.stderr)")
        // It installs, checked as strictly as any mirror, without a download.
        #expect(try machine.run(["remove", "plain"], as: administrator).status == 0)
        let downloads = machine.origin.requests.filter { $0.path.contains("packages/") }.count
        let adopted = try machine.run(["sync", "--from", folder, "plain"], as: administrator)
        #expect(adopted.status == 0, "\(adopted.stdout) \(adopted.stderr)")
        #expect(machine.origin.requests.filter { $0.path.contains("packages/") }.count == downloads, "nothing was downloaded")
        let refused = try machine.run(["mirror", machine.work.file("home-\(user)/stick")], as: user)
        #expect(refused.status == 1 && refused.stderr.contains("group \(SystemMachine.administratorsGroup) "), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: machine.work.file("home-\(user)/stick")))
        // A client of its own that names a folder for the service to write: refused, nothing written.
        let null = open("/dev/null", O_RDWR)
        defer { close(null) }
        let client = try SystemClient.connect(to: machine.socketPath, policy: machine.policyPath)
        try client.send(SystemRequest(arguments: ["mirror", "/tmp/mapgate-evil-mirror"], environment: [:]), streams: [null, null, null])
        #expect(try client.reply().refusal?.reason == .request)
        #expect(!FileManager.default.fileExists(atPath: "/tmp/mapgate-evil-mirror"))
    }

    /// The machine has one tile server, where its policy says: no session sets up one of its own,
    /// an administrator's neither (exit 64, naming the option and the policy's key).
    @Test(arguments: [["serve", "--host", "0.0.0.0"], ["serve", "--port", "0"], ["open", "plain", "-p", "9"], ["serve", "--tile-cache", "0"]])
    func theTileServerIsTheMachines(_ arguments: [String]) throws {
        try machine.startService()
        let result = try machine.run(arguments, as: administrator)
        #expect(result.status == 64 && result.stderr.contains("systemTilePort"), "\(arguments): \(result.stderr)")
    }

    /// Every user's `serve` and `open` is a session of the machine's one tile server, on the
    /// policy's port: it runs while a session is open and stops after the last. Each session is
    /// one use, charged when the server answers its next tile; a session that ends before any
    /// tile costs nothing. The service holds the port between sessions and answers 503 on it, so
    /// no user can take it (found by an attack); a port someone else held before the service
    /// started is said without a use spent, and held from the first session that finds it free.
    @Test func everySessionSharesTheMachinesTileServer() throws {
        try startPrompting()
        let tile = machine.tileServerURL + "/plain/0/0/0.png"
        func fetch(_ url: String) throws -> String {
            try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "10", "-w", "%{http_code}", url]).stdout
        }
        let first = try machine.start(["serve"], as: user)
        defer { first.stop() }
        #expect(first.firstLine()?.contains(machine.tileServerURL + "/") == true, "\(first.stdout) \(first.stderr)")
        let viewer = try machine.start(["open", "plain"], as: administrator)
        defer { viewer.stop() }
        #expect(viewer.firstLine() == machine.tileServerURL + "/view/plain", "\(viewer.stdout) \(viewer.stderr)")
        #expect(try machine.promptsShown() == 2, "each session reserved its use")
        #expect(try fetch(tile) == "200")
        // A session that ends before the server answers another tile gets its use back.
        let idle = try machine.start(["serve"], as: user)
        #expect(idle.firstLine() != nil, "\(idle.stderr)")
        #expect(try machine.promptsShown() == 3)
        idle.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !idle.isRunning }, "\(idle.stderr)")
        #expect(try machine.promptsShown() == 2, "a session that showed no tile spent a use: \(idle.stderr)")
        // One that comes while the server runs pays at the next tile.
        let late = try machine.start(["serve"], as: user)
        defer { late.stop() }
        #expect(late.firstLine() != nil, "\(late.stderr)")
        #expect(try fetch(tile) == "200")
        late.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !late.isRunning })
        #expect(try machine.promptsShown() == 3, "the late session's use was delivered by its tile")
        // The server outlives any one session, and stops with the last.
        first.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !first.isRunning })
        #expect(try fetch(tile) == "200", "the administrator's session still holds the server")
        viewer.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !viewer.isRunning })
        #expect(waitUntil(timeout: 10) { (try? fetch(machine.tileServerURL + "/health")) == "503" }, "the server still answers with no session")
        let closed = try runProcess("/usr/bin/curl", ["-s", "--max-time", "10", "-w", "%{http_code}", tile])
        #expect(closed.stdout == SystemMachine.closedDoorText + "503", "\(closed.stdout)")
        // /health in JSON, which an open viewer page reads (`ViewerPromptBrowserTests`).
        let health = try runProcess("/usr/bin/curl", ["-s", "--max-time", "10", "-w", "\n%{http_code} %{content_type}", machine.tileServerURL + "/health"])
        #expect(health.stdout == SystemMachine.closedDoorHealth + "\n503 application/json", "\(health.stdout)")
        #expect(try machine.promptsShown() == 3)
        // Nobody else can take the port between sessions, and the next session serves on it.
        let squat = try runProcess(
            "/usr/bin/setpriv",
            ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "/usr/bin/python3", "-c",
             "import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', \(machine.tilePort)))"])
        #expect(squat.status != 0 && squat.stderr.contains("Address already in use"), "a user took the machine's port: \(squat.stderr)")
        // Nor the same port on ::1 (where a client asking for localhost may go first), with
        // SO_REUSEADDR, IPV6_V6ONLY or the dual-stack wildcard; a client there is refused at once.
        for (address, v6only) in [("::1", 1), ("::", 0), ("::", 1)] {
            let squat6 = try runProcess(
                "/usr/bin/setpriv",
                ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "/usr/bin/python3", "-c",
                 "import socket; s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, \(v6only)); s.bind(('\(address)', \(machine.tilePort))); s.listen()"])
            #expect(squat6.status != 0 && squat6.stderr.contains("Address already in use"), "a user took [\(address)]:\(machine.tilePort) (V6ONLY \(v6only)): \(squat6.stderr)")
        }
        let refused6 = try runProcess("/usr/bin/curl", ["-s", "-g", "--max-time", "5", "http://[::1]:\(machine.tilePort)/health"])
        #expect(refused6.status == 7, "a client at [::1] is refused at once (curl 7): \(refused6.status)")
        let next = try machine.start(["serve"], as: user)
        #expect(next.firstLine() != nil, "\(next.stderr)")
        #expect(try fetch(tile) == "200", "\(next.stderr)")
        next.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !next.isRunning })
        #expect(waitUntil(timeout: 10) { (try? fetch(tile)) == "503" })
        #expect(try machine.promptsShown() == 4)
        // A port someone else held before the service started: said at each session, nothing spent;
        // once it is free, the next session's server binds it and the service keeps it.
        machine.service?.stop()
        var squatter: HTTPListener? = try HTTPListener(host: "127.0.0.1", port: machine.tilePort)
        try machine.startService(at: during)
        let refused = try machine.run(["serve"], as: user)
        #expect(refused.status == 69, "\(refused.stderr)")
        #expect(refused.stderr.contains("\(machine.tilePort)"), "\(refused.stderr)")
        #expect(try machine.promptsShown() == 4)
        withExtendedLifetime(squatter) {}
        squatter = nil
        let after = try machine.start(["serve"], as: user)
        #expect(after.firstLine() != nil, "\(after.stderr)")
        #expect(try fetch(tile) == "200", "\(after.stderr)")
        after.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !after.isRunning })
        #expect(waitUntil(timeout: 10) { (try? fetch(tile)) == "503" }, "the port was let go after the session")
    }

    /// Found by a review: when the service died (a crash, the OOM killer), every session's next
    /// start was a use, a fault the user did not make. The day a session's use paid is kept in the
    /// machine's record as its user's: that user's next session on this boot serves out the rest
    /// of it with no use and no question, saying so; another user's session pays as ever, and a
    /// session its user stops (Ctrl-C) takes the day with it, as every session pays.
    @Test func aSessionTheServicesCrashEndedCostsItsUserNoUse() throws {
        try startPrompting()
        let tile = machine.tileServerURL + "/plain/0/0/0.png"
        func fetch() throws -> String { try status(of: tile, within: 10) }
        let first = try machine.start(["serve"], as: user)
        defer { first.stop() }
        #expect(first.firstLine() != nil, "\(first.stderr)")
        #expect(try fetch() == "200")
        let paid = try machine.promptsShown()
        #expect(paid == 1, "the session's use was delivered by its tile")
        let command = try #require(serviceCommand(startingWith: ["serve"]))
        // The crash: the service killed, as the OOM killer does; its session's command ends.
        machine.service?.signal(SIGKILL)
        #expect(waitUntil(timeout: 15) { kill(command, 0) != 0 }, "the session's command outlived the service")
        #expect(waitUntil(timeout: 15) { !first.isRunning })
        try machine.startService(at: during)

        // Another user's session, first after the crash, is not that user's day.
        let other = try machine.start(["serve"], as: administrator)
        defer { other.stop() }
        #expect(other.firstLine() != nil, "\(other.stderr)")
        #expect(try fetch() == "200")
        #expect(try machine.promptsShown() == paid + 1, "another user's session took the day over: \(other.stderr)")
        other.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !other.isRunning })

        let again = try machine.start(["serve"], as: user)
        defer { again.stop() }
        #expect(again.firstLine() != nil, "\(again.stderr)")
        #expect(try fetch() == "200", "\(again.stderr)")
        #expect(try machine.promptsShown() == paid + 1, "the session after the crash was charged: \(again.stderr)")
        #expect(again.stderr.contains("your session before this one ended without being stopped (the system service or its terminal went away)"), "\(again.stderr)")
        #expect(!again.stderr.contains("uses left"), "\(again.stderr)")
        // Stopped by its user, the continued session takes the day with it: the next one pays.
        again.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !again.isRunning })
        let later = try machine.start(["serve"], as: user)
        defer { later.stop() }
        #expect(later.firstLine() != nil, "\(later.stderr)")
        #expect(try fetch() == "200")
        #expect(try machine.promptsShown() == paid + 2, "\(later.stderr)")
        #expect(later.stderr.contains("uses left"), "\(later.stderr)")
    }

    /// Found by an attack: a day a crash left, paid after another one the server serves out but
    /// joining after the server had counted its own next day, moved that day back to its payment,
    /// and a use was counted an hour after the last. Only a day paid after the day the server runs
    /// began is taken as its day.
    @Test func aDayACrashLeftDoesNotMoveADayTheServerCountedSince() throws {
        let clock = try startOnAMovableClock()
        let tile = machine.tileServerURL + "/plain/0/0/0.png"
        func fetch() throws -> String { try status(of: tile, within: 20) }
        // What a failure says: the count seen, and the service's log (where each session and
        // each count of the server's is told).
        func seen() -> String { "\((try? machine.promptsShown()).map(String.init) ?? "no count"); \(machine.service?.stderr ?? "")" }
        let first = try machine.start(["serve"], as: user)
        defer { first.stop() }
        #expect(first.firstLine() != nil, "\(first.stderr)")
        #expect(try fetch() == "200")
        let paid = Date().timeIntervalSince1970
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 1 }, "\(seen())")
        try clock.pass(3_600, since: paid)
        let second = try machine.start(["serve"], as: administrator)
        defer { second.stop() }
        #expect(second.firstLine() != nil, "\(second.stderr)")
        #expect(try fetch() == "200")
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 2 }, "\(seen()) \(second.stderr)")
        machine.service?.signal(SIGKILL)
        #expect(waitUntil(timeout: 15) { !first.isRunning && !second.isRunning })
        try startService(on: clock)
        let userAgain = try machine.start(["serve"], as: user)
        defer { userAgain.stop() }
        #expect(userAgain.firstLine() != nil, "\(userAgain.stderr)")
        #expect(try fetch() == "200")
        // Past the user's day: the server counts its next day.
        try clock.pass(86_400 + 300, since: paid)
        usleep(1_500_000)
        #expect(try fetch() == "200")
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 3 }, "\(seen()) \(userAgain.stderr)")
        // The administrator's day (paid an hour after the user's) joins: the day counted stands.
        let adminAgain = try machine.start(["serve"], as: administrator)
        defer { adminAgain.stop() }
        #expect(adminAgain.firstLine() != nil, "\(adminAgain.stderr)")
        #expect(adminAgain.stderr.contains("serves out the day it paid for"), "\(adminAgain.stderr)")
        try clock.pass(86_400 + 3_600 + 120, since: paid)
        usleep(1_500_000)
        #expect(try fetch() == "200")
        usleep(2_000_000)
        #expect(try machine.promptsShown() == 3, "a use was counted an hour after the last: \(seen())")
    }

    /// Found by a review: the service stopped in order (an upgrade's restart, `systemctl
    /// restart`) signalled its sessions, which read as their users' Ctrl-C, and every user's next
    /// session paid. The service ends its sessions by their sockets first, as its death does.
    @Test func aServiceStoppedInOrderCostsItsSessionsNoUse() throws {
        try startPrompting()
        let tile = machine.tileServerURL + "/plain/0/0/0.png"
        func fetch() throws -> String { try status(of: tile, within: 10) }
        let first = try machine.start(["serve"], as: user)
        defer { first.stop() }
        #expect(first.firstLine() != nil, "\(first.stderr)")
        #expect(try fetch() == "200")
        #expect(try machine.promptsShown() == 1)
        machine.service?.stop()
        #expect(waitUntil(timeout: 15) { !first.isRunning })
        #expect(first.stderr.contains("the system service ended the session"), "\(first.stderr)")
        try machine.startService(at: during)
        let again = try machine.start(["serve"], as: user)
        defer { again.stop() }
        #expect(again.firstLine() != nil, "\(again.stderr)")
        #expect(try fetch() == "200")
        #expect(try machine.promptsShown() == 1, "the session after the restart was charged: \(again.stderr)")
    }

    /// Found by an attack: a session started while the service was stopping in order (waiting for
    /// its sessions, one of them stopped with Ctrl-Z) started a server of its own, and was then
    /// signalled with the rest, which read as its user's Ctrl-C. It is refused, spending nothing.
    @Test func aSessionStartedWhileTheServiceStopsIsRefused() throws {
        try startPrompting()
        let first = try machine.start(["serve"], as: user)
        defer { first.stop() }
        #expect(first.firstLine() != nil, "\(first.stderr)")
        #expect(try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "10", "-w", "%{http_code}", machine.tileServerURL + "/plain/0/0/0.png"]).stdout == "200")
        let command = try #require(serviceCommand(startingWith: ["serve"]))
        kill(command, SIGSTOP)
        defer { kill(command, SIGCONT) }
        machine.service?.signal(SIGTERM)
        usleep(500_000)
        let late = try machine.run(["serve"], as: administrator)
        #expect(late.status == 69 && late.stderr.contains("the system service is stopping"), "\(late.status) \(late.stdout)\(late.stderr)")
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 1 }, "\(late.stderr)")
    }

    /// Found by the attack on the day a crash leaves: a session serving it out that joined a
    /// server whose first session had not delivered yet froze the day's start at the monitor's
    /// last look, and served a day past the day's end; and a session the server refused (its port
    /// taken) lost the day with the refusal. The day runs from its payment, and a refusal keeps it.
    @Test func aDayACrashLeftRunsFromItsPaymentAndOutlivesARefusal() throws {
        let clock = try startOnAMovableClock()
        let tile = machine.tileServerURL + "/plain/0/0/0.png"
        func fetch() throws -> String { try status(of: tile, within: 20) }
        let first = try machine.start(["serve"], as: user)
        defer { first.stop() }
        #expect(first.firstLine() != nil, "\(first.stderr)")
        #expect(try fetch() == "200")
        let paid = Date().timeIntervalSince1970
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 1 })
        machine.service?.signal(SIGKILL)
        #expect(waitUntil(timeout: 15) { !first.isRunning })
        // The port taken meanwhile: the session is refused, and the day stays.
        var squatter: HTTPListener? = try HTTPListener(host: "127.0.0.1", port: machine.tilePort)
        try startService(on: clock)
        let refused = try machine.run(["serve"], as: user)
        #expect(refused.status == 69, "\(refused.stderr)")
        withExtendedLifetime(squatter) {}
        squatter = nil
        #expect(try machine.promptsShown() == 1)
        // 23 hours on, the administrator's session starts the server and delivers nothing yet;
        // the user's joins it, serving out the day with no use; the administrator's goes.
        try clock.pass(23 * 3_600, since: paid)
        let other = try machine.start(["serve"], as: administrator)
        defer { other.stop() }
        #expect(other.firstLine() != nil, "\(other.stderr)")
        let again = try machine.start(["serve"], as: user)
        defer { again.stop() }
        #expect(again.firstLine() != nil, "\(again.stderr)")
        #expect(again.stderr.contains("serves out the day it paid for"), "the refusal lost the day: \(again.stderr)")
        other.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !other.isRunning })
        #expect(try fetch() == "200")
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 1 }, "\(again.stderr)")
        // Past the day the first tile paid for (not a day from the join): the next tile is a use.
        try clock.pass(86_400 + 120, since: paid)
        usleep(1_500_000)
        #expect(try fetch() == "200")
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 2 }, "the day ran past its end: \(again.stderr)")
    }

    /// Found by an attack: a `serve` session stopped (Ctrl-Z; its use went back meanwhile), a tile
    /// asked of the machine's server then (503 once the server had waited its 10 s), then `fg`:
    /// the session delivered the request its server had given up on, and the use was spent for
    /// a tile nobody got. A request older than the server's wait is delivered no more.
    @Test func aSessionContinuedAfterItsServerGaveUpDeliversNothing() throws {
        try startPrompting()
        let session = try machine.start(["serve"], as: user)
        defer { session.stop() }
        #expect(session.firstLine() != nil, "\(session.stderr)")
        #expect(try machine.promptsShown() == 1, "the session's use is held")
        let command = try #require(serviceCommand(startingWith: ["serve"]))
        kill(command, SIGSTOP)
        #expect(waitUntil { processIsStopped(command) })
        #expect(try machine.promptsShown() == 0, "a stopped session holds no use")
        let tile = try runProcess("/usr/bin/curl", ["-s", "--max-time", "30", "-w", "\n%{http_code}", machine.tileServerURL + "/plain/0/0/0.png"])
        #expect(tile.stdout.hasSuffix("\n503"), "\(tile.stdout)")
        // Said once (found by the same attack: "the machine's tile server: the machine's tile server: …").
        #expect(tile.stdout.components(separatedBy: "the machine's tile server").count == 2, "\(tile.stdout)")
        kill(command, SIGCONT)
        #expect(waitUntil(timeout: 15) { !session.isRunning }, "\(session.stderr)")
        // The service's command, which held the use again once continued, may end a moment after
        // the session's client (found in CI: read at once, its use was still held).
        var shown: Int?
        #expect(waitUntil(timeout: 10) {
            shown = try? machine.promptsShown()
            return shown == 0
        }, "a use was spent for no tile (\(String(describing: shown)) shown): \(session.stderr)")
    }

    /// As packaged (`mapgate-system-tiles.socket`, `mapgate-system-tiles-ipv6.socket`), systemd
    /// holds the machine's tile port from boot, on 127.0.0.1 and on `[::1]`, before the service
    /// runs: no user can take either then (the service binding them when it starts left that gap:
    /// on `[::1]`, where a client asking for `localhost` may go first, until the service first ran;
    /// found by an attack), a connection to one starts the service, which answers 503 on both while
    /// no session is open and serves its sessions on both.
    @Test func theTilePortIsHeldBeforeTheServiceRuns() throws {
        try machine.startActivatedService()
        for (family, address) in [("AF_INET", "127.0.0.1"), ("AF_INET6", "::1")] {
            let squat = try runProcess(
                "/usr/bin/setpriv",
                ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "/usr/bin/python3", "-c",
                 "import socket; s = socket.socket(socket.\(family)); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('\(address)', \(machine.tilePort)))"])
            #expect(squat.status != 0 && squat.stderr.contains("Address already in use"), "a user took the machine's port on \(address): \(squat.stderr)")
        }
        #expect(machine.service?.stderr.contains("system service listening") == false, "the service ran before anyone asked")
        let tile = machine.tileServerURL + "/plain/0/0/0.png"
        let tile6 = "http://[::1]:\(machine.tilePort)/plain/0/0/0.png"
        func status(_ url: String) throws -> String {
            try runProcess("/usr/bin/curl", ["-s", "-g", "-o", "/dev/null", "--max-time", "10", "-w", "%{http_code}", url]).stdout
        }
        let closed = try runProcess("/usr/bin/curl", ["-s", "--max-time", "20", "-w", "%{http_code}", tile])
        #expect(try machine.run(["sync", "plain"], as: 0).status == 0)
        #expect(closed.stdout == SystemMachine.closedDoorText + "503", "\(closed.stdout) \(machine.service?.stderr ?? "")")
        let closed6 = try runProcess("/usr/bin/curl", ["-s", "-g", "--max-time", "10", "-w", "%{http_code}", tile6])
        #expect(closed6.stdout == SystemMachine.closedDoorText + "503", "[::1] is answered as the port: \(closed6.stdout) \(machine.service?.stderr ?? "")")
        let session = try machine.start(["serve"], as: user)
        #expect(session.firstLine()?.contains(machine.tileServerURL) == true, "\(session.stderr)")
        #expect(try status(tile) == "200")
        #expect(try status(tile6) == "200", "the session is served on [::1] too")
        session.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !session.isRunning })
        #expect(waitUntil(timeout: 10) { (try? status(tile)) == "503" && (try? status(tile6)) == "503" })
        let log = machine.service?.stderr ?? ""
        #expect(!log.contains("cannot be held") && !log.contains("cannot listen on [::1]"), "\(log)")
    }

    /// A tile port handed over that is not the policy's (a unit left at 8080 under a policy with
    /// another port) is said in the service's log and not used; the service binds the policy's.
    @Test func aHandedOverPortThatIsNotThePolicysIsNotUsed() throws {
        let other = try TestPorts.free()
        try machine.startActivatedService(tilesPort: other)
        let status = try machine.run(["status"], as: user)
        #expect(status.status == 0, "\(status.stderr)")
        let log = machine.service?.stderr ?? ""
        #expect(log.contains("127.0.0.1:\(other)") && log.contains("systemTilePort"), "\(log)")
        #expect(log.contains("[::1]:\(other)") && log.contains("mapgate-system-tiles-ipv6.socket"), "\(log)")
        let closed = try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "10", "-w", "%{http_code}", machine.tileServerURL + "/health"])
        #expect(closed.stdout == "503", "the service does not hold the policy's port: \(closed.stdout) \(log)")
    }

    /// The last use runs its day through the machine's server, as on a server of one's own: a
    /// session started on it gets its tiles and keeps its use, and so does one that joins a running
    /// server on it. (Both got 403 for every tile: the server's monitor took the gate that the
    /// session's own use had closed for closed to it.)
    @Test(arguments: [false, true])
    func aSessionOnTheLastUseIsServedItsDay(joinsARunningServer: Bool) throws {
        try startPrompting()
        // The machine's server looks at the gate every half second (a minute otherwise).
        try machine.startService(at: during, environment: ["MAPGATE_GATE_REFRESH_SECONDS": "0.5"])
        let tile = machine.tileServerURL + "/plain/0/0/0.png"
        func fetch() throws -> String { try status(of: tile, within: 10) }
        let tiles = joinsARunningServer ? 3 : 4
        for _ in 0..<tiles {
            #expect(try machine.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user).status == 0)
        }
        var first: BackgroundProcess?
        if joinsARunningServer {
            first = try machine.start(["serve"], as: administrator)
            #expect(first?.firstLine() != nil, "\(first?.stderr ?? "")")
            // Asked again while the answer is not a tile (CI once saw one try fail with six
            // suites at once on two cores; the status is said).
            var got = ""
            #expect(waitUntil(timeout: 20) { got = (try? fetch()) ?? ""; return got == "200" }, "the first session's tile: \(got); \(first?.stderr ?? "")")
        }
        defer { first?.stop() }
        #expect(try machine.promptsShown() == 4)
        let last = try machine.start(["serve"], as: user)
        defer { last.stop() }
        #expect(last.firstLine() != nil, "\(last.stderr)")
        #expect(try machine.promptsShown() == 5)
        #expect(waitUntil(timeout: 5) { (try? fetch()) == "200" }, "the last session got no tile: \(last.stderr)")
        usleep(2_000_000)  // four looks at the gate later, still its day
        #expect(try fetch() == "200", "the last session's day was cut short: \(last.stderr)")
        last.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !last.isRunning })
        #expect(try machine.promptsShown() == 5, "the last session's use was delivered by its tile")
    }

    /// A session that ends before any tile gives its use back and moves no day of serving (found
    /// by an attack: a second `serve` started and stopped before any tile, shortly before each
    /// day ended, restarted the machine's server's day, so one use served tiles for days). The
    /// service's clock is moved a day on at the end (``startOnAMovableClock()``): every process
    /// of the service reads the same clock, as on a real machine (a clock sped up by libfaketime
    /// starts again in each process the service starts, and CI once saw the day go uncounted).
    @Test func aSessionEndedBeforeAnyTileMovesNoDay() throws {
        let clock = try startOnAMovableClock()
        let tile = machine.tileServerURL + "/plain/0/0/0.png"
        func fetch() throws -> String { try status(of: tile, within: 20) }
        let first = try machine.start(["serve"], as: administrator)
        defer { first.stop() }
        #expect(first.firstLine() != nil, "\(first.stderr)")
        #expect(try fetch() == "200")
        let paid = Date().timeIntervalSince1970
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 1 })
        // Later in the day, a second session comes and goes before any tile.
        usleep(8_000_000)
        let second = try machine.start(["serve"], as: user)
        #expect(second.firstLine() != nil, "\(second.stderr)")
        second.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !second.isRunning })
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 1 }, "the second session's use was not given back: \(second.stderr)")
        // 4 s past the day the first tile paid for, when a day run from the second session (8 s
        // or more after it) would have 4 s left: the next tile is the next day's use.
        try clock.pass(86_404, since: paid)
        usleep(1_500_000)
        #expect(try fetch() == "200")
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 2 }, "a day of serving went uncounted: \(first.stderr)")
    }

    /// A delivery round a session fails (its `serve` stopped with Ctrl-Z) answers no tile, and a
    /// tile queued behind it that finds nothing left to deliver starts no day of serving (found by
    /// an attack: that tile moved the server's day to its moment, so the trick, done before each
    /// day ended, served for days on one use). The service's clock is the real one plus an offset
    /// read from a file (libfaketime), moved a day on at the end.
    @Test func aTileQueuedBehindAFailedRoundStartsNoDay() throws {
        let clock = try startOnAMovableClock()
        let tile = machine.tileServerURL + "/plain/0/0/0.png"
        func fetch() throws -> String { try status(of: tile, within: 20) }
        let first = try machine.start(["serve"], as: administrator)
        defer { first.stop() }
        #expect(first.firstLine() != nil, "\(first.stderr)")
        #expect(try fetch() == "200")
        let paid = Date().timeIntervalSince1970
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 1 })
        let second = try machine.start(["serve"], as: user)
        defer { second.stop() }
        #expect(second.firstLine() != nil, "\(second.stderr)")
        second.signal(SIGTSTP)
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 1 }, "the stopped session's use was not given back")
        // One tile asks the stopped session and waits for it; another comes meanwhile.
        let asking = try BackgroundProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "30", "-w", "%{http_code}", tile])
        usleep(1_000_000)
        let queued = try BackgroundProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "30", "-w", "%{http_code}", machine.tileServerURL + "/plain/1/0/0.png"])
        #expect(asking.wait(timeout: 40) == 0 && asking.stdout == "503", "\(asking.stdout)")
        #expect(queued.wait(timeout: 40) == 0, "\(queued.stdout)")
        second.signal(SIGCONT)
        second.signal(SIGTERM)
        // 5 s past the day the first tile paid for (the trick above took longer than that): the
        // next tile is the next day's use.
        try clock.pass(86_405, since: paid)
        usleep(1_500_000)
        #expect(try fetch() == "200")
        #expect(waitUntil(timeout: 10) { (try? machine.promptsShown()) == 2 }, "the day was moved by a tile that delivered nothing: \(first.stderr)")
    }

    /// The gate is the service's: a user's own clock (faketime), preloaded library, state folder
    /// or restored backup changes nothing, and a closed gate stays closed for everyone.
    @Test func aUsersOwnWorldGivesNothing() throws {
        try startPrompting()
        for _ in 0..<5 {
            let use = try machine.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user)
            #expect(use.status == 0, "\(use.stderr)")
        }
        let closed = try machine.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user)
        #expect(closed.status == 77, "\(closed.stderr)")
        // A user's own clock, back before the release: the service's clock decides.
        let faked = try machine.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user, prefix: ["/usr/bin/faketime", "2026-06-01 00:00:00"])
        #expect(faked.status == 77, "\(faked.stderr)")
        // Another state folder and data directory in the environment: not the service's.
        let elsewhere = try machine.run(
            ["tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user, environment: ["XDG_STATE_HOME": "/tmp", "MAPGATE_DATA_DIR": "/tmp"])
        #expect(elsewhere.status == 77, "\(elsewhere.stderr)")
        #expect(try machine.promptsShown() == 5)
    }

    /// The attacks of rounds three and four that need a world of the user's own, against system
    /// mode: a user, time and mount namespace with a frozen boot clock and `faketime`; the same
    /// world asking for a sync as its "root"; the socket replaced inside a mount namespace. Inside
    /// a user namespace the machine's policy is not root's (the kernel shows its owner as
    /// 65534), so the command refuses it and runs nothing; with the socket replaced, nothing of
    /// the machine answers. No tile reaches the user, and the machine's count does not move.
    /// (A policy of the user's own there gives their own empty per-user gate: `GateNamespaceTests`.)
    @Test func aWorldOfTheUsersOwnGivesNothing() throws {
        try startPrompting()
        for _ in 0..<5 { #expect(try machine.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user).status == 0) }
        let installed = FileManager.default.contents(atPath: machine.serviceData + "/regions/plain.mbtiles")
        let target = machine.work.file("home-\(user)/t.png")
        let world = ["/usr/bin/unshare", "-r", "--fork", "--mount", "--time", "--boottime", "1000000", "/usr/bin/faketime", "2026-06-01 00:00:00"]
        let inside = try machine.run(["tile", "plain", "0", "0", "0", "-o", target], as: user, prefix: world)
        #expect([64, 69, 77].contains(inside.status), "\(inside.stderr)")
        let sync = try machine.run(["sync", "plain"], as: user, prefix: ["/usr/bin/unshare", "-r", "--fork"])
        #expect(sync.status != 0, "\(sync.stderr)")
        let fake = machine.work.file("home-\(user)/fake.sock")
        try Data().write(to: URL(fileURLWithPath: fake))
        chown(fake, user, user)
        let script = "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\""
        let replaced = try machine.run(
            [], as: user,
            prefix: ["/usr/bin/unshare", "-r", "--fork", "--mount", "/bin/sh", "-c", script, "sh", fake, machine.socketPath, machine.binary, "tile", "plain", "0", "0", "0", "-o", target],
            bare: true)
        #expect([64, 69].contains(replaced.status), "\(replaced.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target), "a tile reached the user")
        #expect(FileManager.default.contents(atPath: machine.serviceData + "/regions/plain.mbtiles") == installed)
        #expect(try machine.promptsShown() == 5, "nothing of this changed the machine's count")
    }

    /// Issue 36's ordinary-tool cases against the service: a library the user preloads into
    /// their client (glibc's `syscall` freezing the boot clock, `linkat` failing so that `tile -o`
    /// never puts the file in place, as a folder made read-only at that moment would) reaches
    /// only the client. The service counts the use when it writes the tile's first byte to the
    /// user's descriptor (the user holds the bytes from then on), so a client that then fails to
    /// link them gets nothing back; and the machine's clock and count decide, so five uses close
    /// the gate for this client as for any other.
    @Test func whatAUserPreloadsIntoTheirClientChangesNothingOfTheMachines() throws {
        try startPrompting()
        let library = try PreloadLibrary.compile(in: machine.work.path, failingLinkat: true)
        let target = machine.work.file("home-\(user)/t.png")
        let unlinked = try machine.run(["tile", "plain", "0", "0", "0", "-o", target], as: user, environment: ["LD_PRELOAD": library])
        #expect(unlinked.status != 0, "linkat failed in the client: \(unlinked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try machine.promptsShown() == 1, "the tile's bytes reached the user's descriptor: the use is counted")
        for _ in 0..<4 { #expect(try machine.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user).status == 0) }
        let frozen = try machine.run(
            ["tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user, prefix: ["/usr/bin/faketime", "2026-06-01 00:00:00"],
            environment: ["LD_PRELOAD": library])
        #expect(frozen.status == 77, "\(frozen.stderr)")
        #expect(try machine.promptsShown() == 5)
    }

    /// The prompt is asked at the user's own terminal by the command the service runs; Ctrl-C
    /// there costs nothing, "later" spends one of the machine's uses.
    @Test func thePromptIsAskedAtTheUsersTerminal() throws {
        try startPrompting()
        let (program, arguments) = machine.command([machine.binary, "tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user)
        let environment = machine.environment(of: user).merging(["PATH": "/usr/bin:/bin", "TERM": "xterm"]) { $1 }
        let cancelled = try TerminalSession.run(program, arguments, environment: environment, steps: [.init(waitFor: "Update now or later?", send: "\u{03}")])
        #expect(cancelled.status == 130, "\(cancelled.screen)")
        #expect(try machine.promptsShown() == 0, "Ctrl-C at the prompt spent a use: \(cancelled.screen)")
        let later = try TerminalSession.run(program, arguments, environment: environment, steps: [.init(waitFor: "Update now or later?", send: "l\r")])
        #expect(later.status == 0, "\(later.screen)")
        #expect(later.screen.contains("5 uses left"), "\(later.screen)")
        #expect(try machine.promptsShown() == 1)
    }

    /// A user's session whose terminal closes before it answered a tile ends, and its use goes
    /// back, with the terminal as its streams and with them elsewhere (`serve < /dev/null 2>&1 |
    /// cat`): a session never reloads on SIGHUP (the configuration is the service's), so the
    /// forwarded SIGHUP ends it. Guards what the per-user `serve` got wrong (it reloaded; found by
    /// an attack).
    @Test func aSessionWhoseTerminalClosesEndsAndCostsNothing() throws {
        try startPrompting()
        let environment = machine.environment(of: user).merging(["PATH": "/usr/bin:/bin", "TERM": "xterm"]) { $1 }
        let (program, arguments) = machine.command([machine.binary, "serve"], as: user)
        let atTheTerminal = try TerminalSession.run(
            program, arguments, environment: environment,
            steps: [.init(waitFor: "Update now or later?", send: "l\r"), .hangUp(after: "Ctrl-C to stop")])
        #expect(!atTheTerminal.timedOut, "\(atTheTerminal.screen)")
        #expect(try machine.promptsShown() == 0, "\(atTheTerminal.screen)")
        let (shell, piped) = machine.command(["/bin/sh", "-c", "\"$@\" < /dev/null 2>&1 | cat", "sh", machine.binary, "serve"], as: user)
        let elsewhere = try TerminalSession.run(shell, piped, environment: environment, steps: [.hangUp(after: "Ctrl-C to stop")])
        #expect(!elsewhere.timedOut, "\(elsewhere.screen)")
        #expect(try machine.promptsShown() == 0, "\(elsewhere.screen)")
    }

    /// `tile plain 0 0 0 -o /dev/null` as the user, typed (with `suffix`) at an interactive bash
    /// with job control, as a user has (its prompt `READY$ `), then `steps`.
    func tileAtAnInteractiveShell(_ suffix: String = "", then steps: [TerminalSession.Step]) throws -> TerminalSession.Result {
        let environment = machine.environment(of: user).merging(["PATH": "/usr/bin:/bin", "TERM": "xterm", "PS1": "READY$ "]) { $1 }
        let (program, arguments) = machine.command([machine.binary, "tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user)
        let line = ([program] + arguments).map { "'" + $0.replacing("'", with: "'\\''") + "'" }.joined(separator: " ")
        return try TerminalSession.run(
            "/bin/bash", ["--norc", "--noprofile", "-i"], environment: environment, steps: [.init(waitFor: "READY$ ", send: line + suffix + "\r")] + steps)
    }

    /// Found by an attack: Ctrl-Z at the question stopped the user's process but not the
    /// service's command, which went on reading the terminal: the next line typed at the shell
    /// answered it, and a use was spent by a job the user had put aside. The command stops with
    /// its caller now; the line goes to the shell, and a terminal closed then costs nothing. (At
    /// an interactive shell with job control, as a user has: where no shell could continue it,
    /// Ctrl-Z does nothing, as the kernel does there.)
    @Test func ctrlZAtTheQuestionStopsTheServicesCommandToo() throws {
        try startPrompting()
        let session = try tileAtAnInteractiveShell(
            then: [
                .init(waitFor: "Update now or later?", send: "\u{1A}"),
                .init(waitFor: "Stopped", send: "l\r"), .hangUp(after: "command not found"),
            ])
        #expect(!session.timedOut, "\(session.screen)")
        #expect(try machine.promptsShown() == 0, "\(session.screen)")
    }

    /// Found by an attack: a Ctrl-Z that reached the service's command inside a transaction stopped
    /// it there (the service sent SIGSTOP), holding the state database's lock, and every other
    /// user's command failed on it (74) for as long as the caller stayed stopped. The command now
    /// stops only between its database calls. (Here its call waits on a lock the test holds.)
    /// sqlite3 holding both of the service's state databases (the data directory's and the gate's
    /// copy) in one exclusive transaction for `seconds`.
    func holdingTheStateDatabases(for seconds: Double) throws -> BackgroundProcess {
        try BackgroundProcess(
            "/usr/bin/sqlite3",
            [
                machine.serviceData + "/state.sqlite", "ATTACH '\(machine.serviceFolder)/state/mapgate/state.sqlite' AS gate;", "BEGIN EXCLUSIVE;",
                ".shell sleep \(seconds)", "COMMIT;",
            ])
    }

    /// Whether `pid` sleeps in a timed wait (`nanosleep`, `clock_nanosleep`: SQLite's busy wait).
    static func isSleeping(_ pid: pid_t) -> Bool {
        guard let call = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8).split(separator: " ").first else { return false }
        return call == "35" || call == "230"
    }

    @Test func ctrlZNeverStopsTheServicesCommandInsideADatabaseCall() throws {
        try startPrompting()
        // Held long enough for a loaded machine (CI runs six suites on two cores): the command
        // must be inside its waiting database call when the Ctrl-Z comes, not still starting.
        let holder = try holdingTheStateDatabases(for: 4)
        usleep(300_000)
        // A client of the test's own, which sends the Ctrl-Z byte as a user's process does.
        let null = open("/dev/null", O_RDWR)
        defer { close(null) }
        let client = try SystemClient.connect(to: machine.socketPath, policy: machine.policyPath)
        try client.send(SystemRequest(arguments: ["tile", "plain", "0", "0", "0", "-o", "-"], environment: [:]), streams: [null, null, null])
        func tileCommand() -> pid_t? { serviceCommand(startingWith: ["tile", "plain"]) }
        var command: pid_t?
        #expect(waitUntil { command = tileCommand(); return command != nil }, "\(machine.service?.stderr ?? "")")
        // Inside its call: sleeping in SQLite's busy wait (found flaky under load at 200 ms, when
        // the command could still be starting).
        #expect(waitUntil(timeout: 3) { Self.isSleeping(command ?? 0) }, "the command never waited on the lock")
        usleep(300_000)
        client.socket.sendByte(UInt8(SIGTSTP))
        usleep(500_000)
        // Still waiting on the lock, inside its call: not stopped there.
        #expect(!processIsStopped(command ?? 0))
        #expect(holder.wait(timeout: 10) == 0, "\(holder.stderr)")
        // Once its calls are done it stops (or has finished), and holds nothing: others go on.
        let stopping = command ?? 0
        #expect(waitUntil(timeout: 20) { processIsStopped(stopping) || kill(stopping, 0) != 0 })
        let other = try machine.run(["status"], as: 0)
        #expect(other.status == 0, "\(other.stderr)")
        client.socket.sendByte(UInt8(SIGCONT))
        #expect(try client.reply().exitCode == 0)

        // Ctrl-Z, then `fg` before the call has ended: the stop is called off, not made for good
        // once the call ends (a process stopped after its continue would never go on).
        let again = try holdingTheStateDatabases(for: 1.5)
        usleep(300_000)
        let second = try SystemClient.connect(to: machine.socketPath, policy: machine.policyPath)
        try second.send(SystemRequest(arguments: ["tile", "plain", "0", "0", "0", "-o", "-"], environment: [:]), streams: [null, null, null])
        command = nil
        #expect(waitUntil { command = tileCommand(); return command != nil })
        second.socket.sendByte(UInt8(SIGTSTP))
        usleep(200_000)
        second.socket.sendByte(UInt8(SIGCONT))
        #expect(again.wait(timeout: 10) == 0)
        let running = command ?? 0
        #expect(waitUntil(timeout: 10) { kill(running, 0) != 0 }, "the service's command stayed stopped")
        second.socket.sendByte(UInt8(SIGCONT))
        #expect(try second.reply().exitCode == 0)
    }

    /// Ctrl-Z at the question, then `bg`: the service's command stays stopped while its caller
    /// runs in the background (found by an attack on the per-user run: in the background the
    /// question read the keys typed at the shell); the lines typed go to the shell, nothing is
    /// counted, and `fg` brings the question back.
    @Test func ctrlZAndBgLeaveTheServicesCommandStopped() throws {
        try startPrompting()
        let session = try tileAtAnInteractiveShell(
            then: [
                .init(waitFor: "Update now or later?", send: "\u{1A}"),
                .init(waitFor: "Stopped", send: "bg\r"), .init(waitFor: nil, send: "l\r", delay: 1.5), .init(waitFor: nil, send: "l\r", delay: 1),
                .init(waitFor: nil, send: "fg\r", delay: 1), .init(waitFor: nil, send: "\u{03}", delay: 2), .hangUp(after: "nothing was counted"),
            ])
        #expect(!session.timedOut, "\(session.screen)")
        #expect(session.screen.components(separatedBy: "command not found").count == 3, "\(session.screen)")
        #expect(session.screen.components(separatedBy: "Update now or later?").count == 3, "\(session.screen)")
        #expect(try machine.promptsShown() == 0, "\(session.screen)")
    }

    /// Started in the background (`&`): the service's command, whose caller is not in its
    /// terminal's foreground, reads nothing there (found by an attack: it read, and answered with,
    /// the keys typed at the shell, and spent the last use); `fg` shows the question again.
    @Test func aCommandWhoseCallerIsInTheBackgroundReadsNothing() throws {
        try startPrompting()
        let session = try tileAtAnInteractiveShell(
            " &",
            then: [
                .init(waitFor: "Update now or later?", send: "l\r", delay: 1),
                .init(waitFor: nil, send: "l\r", delay: 1), .init(waitFor: nil, send: "fg\r", delay: 1),
                .init(waitFor: nil, send: "\u{03}", delay: 2), .hangUp(after: "nothing was counted"),
            ])
        #expect(!session.timedOut, "\(session.screen)")
        #expect(session.screen.components(separatedBy: "command not found").count == 3, "\(session.screen)")
        #expect(session.screen.components(separatedBy: "Update now or later?").count == 3, "\(session.screen)")
        #expect(try machine.promptsShown() == 0, "\(session.screen)")
    }

    /// A reader that takes nothing (a pipe left full) cannot hold a use of the machine's gate: the
    /// service's command gives up before its delivery after its stall limit (60 s; 2 s here), says
    /// why (74), and nothing is counted (found by an attack: the use was held for as long as its
    /// user liked, and at the last use every other user found the gate closed meanwhile).
    @Test func aReaderThatTakesNothingCannotHoldAUseOfTheMachine() throws {
        try startPrompting(environment: ["MAPGATE_OUTPUT_STALL_TIMEOUT": "2"])
        let status = machine.work.file("status")
        let (program, arguments) = machine.command([machine.binary, "tile", "plain", "0", "0", "0"], as: user)
        // The pipe is filled first (64 KiB, its size), and its reader only sleeps.
        let script = "(head -c 65536 /dev/zero; \"$@\"; echo $? > '\(status)') | sleep 60"
        let pipeline = try BackgroundProcess("/bin/sh", ["-c", script, "sh", program] + arguments, environment: machine.environment(of: user))
        defer { pipeline.stop(grace: 1) }
        // Ended while its reader still sleeps (without the limit it waited as long as the reader).
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !FileManager.default.fileExists(atPath: status) { usleep(100_000) }
        let code = try String(contentsOfFile: status, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(code == "74", "\(pipeline.stderr)")
        #expect(pipeline.stderr.contains("standard output: its reader took nothing for 2 seconds"), "\(pipeline.stderr)")
        #expect(pipeline.isRunning, "the reader still sleeps")
        #expect(try machine.promptsShown() == 0, "no use is counted")
    }

    /// A run whose reader takes nothing is never given a use: it waits for its reader before the
    /// gate reserves one, so at the machine's last use another user's run gets it meanwhile
    /// (found by an attack: one user running such a command in a loop held the last use from
    /// everyone, root too, each run for the stall limit).
    @Test func aStalledReaderIsNeverGivenTheLastUse() throws {
        try startPrompting(environment: ["MAPGATE_OUTPUT_STALL_TIMEOUT": "8"])
        for _ in 0..<4 { #expect(try machine.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: 0).status == 0) }
        #expect(try machine.promptsShown() == 4)
        let status = machine.work.file("status")
        let (program, arguments) = machine.command([machine.binary, "tile", "plain", "0", "0", "0"], as: user)
        let script = "(head -c 65536 /dev/zero; \"$@\"; echo $? > '\(status)') | sleep 60"
        let pipeline = try BackgroundProcess("/bin/sh", ["-c", script, "sh", program] + arguments, environment: machine.environment(of: user))
        defer { pipeline.stop(grace: 1) }
        usleep(2_000_000)
        #expect(!FileManager.default.fileExists(atPath: status), "the stalled run still waits")
        let root = try machine.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: 0)
        #expect(root.status == 0, "root gets the last use while the stalled run waits: \(root.stderr)")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !FileManager.default.fileExists(atPath: status) { usleep(100_000) }
        #expect((try? String(contentsOfFile: status, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == "74", "\(pipeline.stderr)")
        #expect(try machine.promptsShown() == 5)
    }

    /// An administrator in more groups than 256 is still one (found by an attack: the service
    /// read at most 256 of the caller's groups, and refused such an administrator's `sync`).
    @Test func anAdministratorInManyGroupsIsStillOne() throws {
        try machine.startService()
        let groups = ([SystemMachine.administratorsGroup] + (70_000..<70_300).map { gid_t($0) }).map { String($0) }.joined(separator: ",")
        let result = try runProcess(
            "/usr/bin/setpriv", ["--reuid=\(administrator)", "--regid=\(administrator)", "--groups=\(groups)", machine.binary, "sync", "plain"],
            environment: machine.environment(of: administrator))
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Found by an attack: "update now" at the prompt made the service run `xdg-open` as its own
    /// user with the caller's terminal (a text browser would have taken the user's keyboard as
    /// the service). The service only says the address; nothing is started, nothing counted.
    @Test func updateNowStartsNothingAsTheService() throws {
        let bin = machine.work.file("fake-bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let marks = machine.work.file("marks")
        try FileManager.default.createDirectory(atPath: marks, withIntermediateDirectories: true)
        let marker = marks + "/xdg-open-ran"
        try "#!/bin/sh\ntouch \(marker)\n".write(toFile: bin + "/xdg-open", atomically: true, encoding: .utf8)
        #expect(chmod(bin, 0o755) == 0 && chmod(bin + "/xdg-open", 0o755) == 0 && chmod(marks, 0o777) == 0)
        try machine.startService(at: "2027-01-01 00:00:00")
        #expect(try machine.run(["sync", "plain"], as: 0).status == 0)
        try machine.publish(version: "1.5.0")
        #expect(try machine.run(["check"], as: 0).status == 0)
        try machine.startService(at: during, environment: ["PATH": bin + ":/usr/bin:/bin"])
        let (program, arguments) = machine.command([machine.binary, "tile", "plain", "0", "0", "0", "-o", "/dev/null"], as: user)
        let environment = machine.environment(of: user).merging(["PATH": "/usr/bin:/bin", "TERM": "xterm"]) { $1 }
        let now = try TerminalSession.run(program, arguments, environment: environment, steps: [.init(waitFor: "Update now or later?", send: "u\r")])
        #expect(now.screen.contains("to update"), "\(now.screen)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the service started a browser")
        #expect(try machine.promptsShown() == 0)
        // Nothing was written, so the user's FILE stays as it was (found by an attack: the user's
        // process put its empty file in FILE's place, and `export` said it exported 0 tiles).
        let home = machine.work.file("home-\(user)")
        for (name, command) in [("keep.png", ["tile", "plain", "0", "0", "0", "-o"]), ("keep.pmtiles", ["export", "plain"])] {
            let file = home + "/" + name
            try "precious\n".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(chown(file, user, user) == 0)
            let (program, arguments) = machine.command([machine.binary] + command + [file], as: user)
            let declined = try TerminalSession.run(program, arguments, environment: environment, steps: [.init(waitFor: "Update now or later?", send: "u\r")])
            #expect(declined.status == 0, "\(declined.screen)")
            #expect(!declined.screen.contains("exported"), "\(declined.screen)")
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "precious\n", "\(name)")
        }
        #expect(try machine.promptsShown() == 0)
    }

    /// A user who is not a map administrator may make the service reach the network for the
    /// machine (`check`: the store; `catalog`: the publisher, with the machine's credentials) once
    /// a minute per command: else any user could make the machine flood them. Refused as 69, with
    /// no request made; administrators and root are not paced, nor is another user.
    @Test func aUserCannotMakeTheMachineFloodTheNetwork() throws {
        try machine.startService()
        func hits(_ suffix: String) -> Int { machine.origin.requests.filter { $0.path.hasSuffix(suffix) }.count }
        let first = try machine.run(["check"], as: user)
        #expect(first.status == 0, "\(first.stderr) service: \(machine.service?.stderr ?? "")")
        for (command, target) in [("check", "/lookup.json"), ("catalog", "/catalog.json")] {
            if command == "catalog" { #expect(try machine.run([command], as: user).status == 0) }
            let before = hits(target)
            let again = try machine.run([command], as: user)
            #expect(again.status == 69 && again.stderr.contains("once a minute"), "\(command): \(again.status) \(again.stderr)")
            #expect(hits(target) == before, "\(command) reached the network again")
        }
        for uid in [administrator, 0, administrator] {
            #expect(try machine.run(["check"], as: uid).status == 0)
        }
        #expect(machine.service?.stderr.contains("refused check: tooSoon") == true)
    }

    /// Found by an attack: a newline in an argument wrote lines into the service's log that read
    /// as another user's commands. Each request is one line, its control characters escaped.
    @Test func anArgumentCannotForgeALineOfTheServicesLog() throws {
        try machine.startService()
        let forged = "x\nuid 0 (pid 1): remove plain (pid 2)"
        // Sent as a hand-made client would: mapgate's own refuses such a region before it asks.
        let null = open("/dev/null", O_RDWR)
        defer { close(null) }
        let client = try SystemClient.connect(to: machine.socketPath, policy: machine.policyPath)
        try client.send(SystemRequest(arguments: ["verify", forged], environment: [:]), streams: [null, null, null])
        _ = try client.reply()
        let log = machine.service?.stderr ?? ""
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("uid 0 (pid 1): remove plain") }, "\(log)")
        #expect(log.contains("x\\nuid 0 (pid 1)"), "\(log)")
    }

    /// A command line longer than the service reads (found by an attack: "connection reset") is
    /// said as too long, a usage error, before anything is sent; the service keeps answering.
    @Test func aCommandLineTooLongForTheServiceIsSaidAsSuch() throws {
        try machine.startService()
        let long = try machine.run(["verify"] + (0..<7_000).map { "region-\($0)" }, as: user)
        #expect(long.status == 64, "\(long.stderr)")
        #expect(long.stderr.contains("the command line is too long for the system service ("), "\(long.stderr)")
        #expect(long.stderr.contains("at most 65536"), "\(long.stderr)")
        #expect(try machine.run(["list"], as: user).status == 0)
    }

    /// Ctrl-C reaches the command the service runs (a server stops in order); a client killed
    /// outright (SIGKILL) stops it too: nothing of the user's keeps running as the service, and
    /// the port answers as it does between sessions.
    @Test func signalsReachTheCommandAndAGoneClientStopsIt() throws {
        try machine.startService()
        #expect(try machine.run(["sync", "plain"], as: 0).status == 0)
        for signal in [SIGINT, SIGKILL] {
            let server = try machine.start(["serve"], as: user)
            guard let line = server.firstLine(), let url = line.split(separator: " ").first(where: { $0.hasPrefix("http://") }) else {
                Issue.record("no URL from serve through the service: \(server.stderr)")
                server.stop()
                return
            }
            let base = url.hasSuffix("/") ? String(url.dropLast()) : String(url)
            let health = try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", base + "/health"])
            #expect(health.stdout == "200")
            server.signal(signal)
            let deadline = Date().addingTimeInterval(10)
            var stopped = false
            while Date() < deadline, !stopped {
                // The session's server stopped: the service's own answer between sessions.
                stopped = (try? runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "1", base + "/health"]))?.stdout == "503"
                if !stopped { usleep(100_000) }
            }
            #expect(stopped, "the service's server still answers after the client got \(signal)")
            server.stop()
        }
    }

    /// Sessions that come and go at once never have two tile servers on the port: the last
    /// session's server is stopped before the next session's starts, so the log says each
    /// "started" and "stopped" in turn (found by an attack: a session starting while the last
    /// one's server stopped got a second server beside it, "stopped" was logged after the new
    /// "started", and a client saw an empty reply).
    @Test func sessionsComingAndGoingNeverShareThePort() throws {
        // The stop of a server made as slow as a loaded machine's (each of its threads joined
        // 300 ms late): the next session comes while the last one's server stops.
        let slow = try PreloadLibrary.compileSlowServerStop(in: machine.work.path)
        try machine.startService(environment: ["LD_PRELOAD": slow])
        #expect(try machine.run(["sync", "plain"], as: 0).status == 0)
        let health = { try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "10", "-w", "%{http_code}", machine.tileServerURL + "/health"]).stdout }
        var session = try machine.start(["serve"], as: user)
        #expect(session.firstLine() != nil, "\(session.stderr)")
        for _ in 0..<3 {
            session.signal(SIGINT)
            let next = try machine.start(["serve"], as: user)
            #expect(waitUntil(timeout: 10) { !session.isRunning }, "\(session.stderr)")
            session.stop()
            #expect(next.firstLine() != nil, "\(next.stderr)")
            #expect(try health() == "200", "the next session is served")
            session = next
        }
        session.signal(SIGINT)
        #expect(waitUntil(timeout: 10) { !session.isRunning })
        session.stop()
        #expect(waitUntil(timeout: 30) { (try? health()) == "503" }, "the last server stopped")
        let log = (machine.service?.stderr ?? "").split(separator: "\n")
        let turns = log.compactMap { line -> String? in
            if line.contains("started the machine's tile server") { return "started" }
            if line.contains("the machine's tile server stopped") { return "stopped" }
            return nil
        }
        #expect(!turns.isEmpty)
        let overlapping = zip(turns, turns.dropFirst()).contains { $0 == $1 }
        #expect(!overlapping, "two servers on the port at once: \(turns.joined(separator: " "))\n\(log.joined(separator: "\n"))")
    }

    /// A session that comes while the machine's server answers tiles is told its URL first, and
    /// only then asked to deliver (found by an attack: a tile between the two made the command
    /// fail with "answered out of turn", in about 1 of 75 sessions, and when the command was
    /// gone before `ready`, the delivery round waited its whole 10 s with every tile behind it).
    /// Statistical: 150 sessions under four clients found it 9 times in 10 before the fix. A tile
    /// is slow past 5 s: the round's 10 s, not a loaded machine's (in CI, with six suites at a
    /// time, once all four clients waited 2.2 s together: a write of the record waits up to 2 s
    /// for a process reading it).
    @Test func aSessionJoiningWhileTilesAreAnsweredGetsItsURL() throws {
        try machine.startService()
        #expect(try machine.run(["sync", "plain"], as: 0).status == 0)
        let holder = try machine.start(["serve"], as: administrator)
        defer { holder.stop() }
        #expect(holder.firstLine() != nil, "\(holder.stderr)")
        let clients = try BackgroundProcess("/usr/bin/python3", ["-c", """
            import http.client, threading, time
            def run():
                while True:
                    began = time.time()
                    try:
                        c = http.client.HTTPConnection('127.0.0.1', \(machine.tilePort), timeout=30)
                        c.request('GET', '/plain/0/0/0.png'); c.getresponse().read()
                    except Exception as e:
                        print('error', e, flush=True)
                    if time.time() - began > 5: print('slow %.1f' % (time.time() - began), flush=True)
            for _ in range(4): threading.Thread(target=run, daemon=True).start()
            time.sleep(3600)
            """])
        defer { clients.stop() }
        var failures: [String] = []
        for _ in 0..<150 {
            let session = try machine.start(["serve"], as: user)
            if session.firstLine() == nil { failures.append(session.stderr) }
            session.signal(SIGINT)
            _ = waitUntil(timeout: 10) { !session.isRunning }
            session.stop()
        }
        #expect(failures.isEmpty, "\(failures.count) sessions got no URL: \(failures.prefix(3))")
        #expect(!clients.stdout.contains("slow"), "tiles waited: \(clients.stdout)")
    }

    /// A user who holds hundreds of silent connections to the machine's port between sessions
    /// (600: more than the small server there takes) keeps nobody else waiting: the answer there
    /// is one line, and a connection that has not asked for it within a second is closed (found
    /// by an attack: 300 such connections made every other client wait 5 to 10 s).
    @Test func silentConnectionsBetweenSessionsKeepNobodyWaiting() throws {
        try machine.startService()
        try holdSilentConnections(600) { _ in
            // The best of three (before the fix each waited 5 to 10 s).
            let waits = try healthWaits()
            #expect(waits.min()! < 2.5, "clients waited \(waits) s behind silent connections")
        }
    }

    /// Nor do they take the service's open files: under systemd's limit of 1,024 (which the
    /// service cannot raise when the hard limit is that too), 1,100 silent connections to the port
    /// between sessions leave every user's command served (found by an attack: the small server
    /// there took all 1,024, and every command failed with "ended the request without an answer").
    @Test func silentConnectionsBetweenSessionsTakeNotTheServicesFiles() throws {
        try machine.startService(prefix: ["/usr/bin/prlimit", "--nofile=1024:1024", "--"])
        // 1,100 silent connections, each closed by the service opened again at once.
        let flood = try startReconnectingFlood(1_100, seconds: 30)
        defer { flood.stop() }
        sleep(2)
        for _ in 0..<2 {
            let list = try machine.run(["list"], as: user)
            #expect(list.status == 0, "a user's command failed during the flood: \(list.stderr)")
        }
    }

    /// How long each of three clients waited for the port's `/health` (503 between sessions): the
    /// best of three counts, as a loaded machine slows one now and then.
    func healthWaits() throws -> [Double] {
        try (0..<3).map { _ in
            let began = Date()
            let health = try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "20", "-w", "%{http_code}", machine.tileServerURL + "/health"])
            #expect(health.stdout == "503", "\(health.stdout)")
            return Date().timeIntervalSince(began)
        }
    }

    /// Keeps `count` connections to the machine's tile port open that say nothing, each one the
    /// service closes opened again at once, for `seconds` (a process of its own, with the open
    /// files it needs). Returns once it floods.
    func startReconnectingFlood(_ count: Int, seconds: Int) throws -> BackgroundProcess {
        let files = max(4096, count * 2)
        let flood = try BackgroundProcess(
            "/usr/bin/prlimit",
            ["--nofile=\(files):\(files)", "--", "/usr/bin/python3", "-c", """
            import selectors, socket, sys, time
            selector = selectors.DefaultSelector()
            live = 0
            def connect():
                global live
                s = socket.socket(); s.setblocking(False); s.connect_ex(('127.0.0.1', \(machine.tilePort)))
                selector.register(s, selectors.EVENT_READ); live += 1
            print('flooding', flush=True)
            end = time.time() + \(seconds)
            while time.time() < end:
                while live < \(count): connect()
                for key, _ in selector.select(0.05):
                    try: data = key.fileobj.recv(4096)
                    except Exception: data = b''
                    if not data: selector.unregister(key.fileobj); key.fileobj.close(); live -= 1
            """])
        #expect(flood.firstLine() == "flooding", "\(flood.stderr)")
        return flood
    }

    /// Holds `count` connections to the machine's tile port that say nothing while `body` runs.
    func holdSilentConnections(_ count: Int, _ body: ([Int32]) throws -> Void) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        // With room for the suite's other tests, which run beside it in this process (46 of 600
        // connections failed once in CI with the limit at the count + 256).
        if limit.rlim_cur < limit.rlim_max, limit.rlim_cur < rlim_t(count + 4096) {
            limit.rlim_cur = min(limit.rlim_max, rlim_t(count + 4096))
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        // The port is the service's once it takes connections (it refused the first 8 once in a
        // full run: the service had answered on its socket a moment before it listened there).
        #expect(waitUntil { LoopbackSocket.connect(port: machine.tilePort).map { close($0) } != nil }, "the machine's port never listened")
        var silent: [Int32] = []
        defer { silent.forEach { close($0) } }
        for _ in 0..<count {
            let fd = LoopbackSocket.connect(port: machine.tilePort)
            #expect(fd != nil, "connection \(silent.count + 1) of \(count): \(String(cString: strerror(errno)))")
            if let fd { silent.append(fd) }
        }
        try body(silent)
    }

    /// Stopping the service (systemctl stop) stops the commands it runs; none is left behind
    /// running as the service's user, and the user's command ends too.
    @Test func stoppingTheServiceStopsItsCommands() throws {
        try machine.startService()
        #expect(try machine.run(["sync", "plain"], as: 0).status == 0)
        let server = try machine.start(["serve"], as: user)
        defer { server.stop() }
        guard let line = server.firstLine(), let url = line.split(separator: " ").first(where: { $0.hasPrefix("http://") }) else {
            Issue.record("no URL from serve through the service: \(server.stderr)")
            return
        }
        machine.service?.stop()
        let health = try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "2", String(url) + "health"])
        #expect(health.status != 0, "the service's server still answers after the service stopped")
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, server.isRunning { usleep(50_000) }
        #expect(!server.isRunning, "the user's serve did not end with the service")
    }

    /// A user who opens connections and says nothing holds at most their own share of the
    /// service: the next is refused as busy, and others are still served.
    @Test func aFloodOfIdleConnectionsIsRefusedNotQueued() throws {
        try machine.startService()
        // As root (uid 0): connections that send nothing, one after another, until one is refused.
        var idle: [LocalSocket] = []
        var refusal: SystemRefusal?
        for _ in 0..<12 {
            let connection = try LocalSocket.connect(to: machine.socketPath)
            if let message = try? connection.receive(limit: 65536, maximumDescriptors: 0, timeout: 0.5) {
                refusal = try JSONDecoder().decode(SystemReply.self, from: message.body).refusal
                break
            }
            idle.append(connection)
        }
        #expect(refusal?.reason == .userBusy)
        #expect(refusal?.errorDescription?.contains("you have 8 requests under way") == true, "\(String(describing: refusal))")
        #expect(idle.count <= 8, "one user holds at most eight requests under way")
        // A request sent after the service has refused the connection and closed it: the reply
        // is the answer, not the send's broken pipe (the service is often first).
        let late = try SystemClient.connect(to: machine.socketPath, policy: machine.policyPath)
        var entry = pollfd(fd: late.socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&entry, 1, 5000) == 1)
        usleep(100_000)
        let lateRefusal = #expect(throws: SystemRefusal.self) {
            try late.send(SystemRequest(arguments: ["list"], environment: [:]), streams: [0, 1, 2])
        }
        #expect(lateRefusal?.reason == .userBusy, "\(String(describing: lateRefusal))")
        let other = try machine.run(["list"], as: user)
        #expect(other.status == 0, "another user is still served: \(other.stderr)")
        withExtendedLifetime(idle) {}
    }

    /// Users cannot take the administrators' share of the service: with every request users may
    /// have under way taken, by many uids (as one user's subordinate uids are, `newuidmap`), root
    /// is still served, and a user is told the service is busy with the right count, not "broken
    /// pipe" (found by an attack: 64 uids of one user's range starved root, and the refusal read
    /// as a broken pipe or as the per-user limit).
    @Test func usersCannotTakeTheAdministratorsShare() throws {
        try machine.startService()
        // 7 uids × 8 connections that say nothing: the 56 of the 64 a user may take (the service
        // drops each after its 10 s request window: the checks below run well within it).
        let script = """
            import socket, sys, time
            held = []
            for _ in range(8):
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); held.append(s)
            print("held", flush=True); time.sleep(30)
            """
        var holders: [BackgroundProcess] = []
        defer { holders.forEach { $0.stop(grace: 0) } }
        for uid in 64_201...64_207 {
            holders.append(
                try BackgroundProcess(
                    "/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "/usr/bin/python3", "-c", script, machine.socketPath]))
        }
        for holder in holders { #expect(holder.firstLine(timeout: 5) == "held", "\(holder.stderr)") }
        let refused = try machine.run(["list"], as: user)
        #expect(refused.status == 69, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("the system service is busy (56 requests under way)"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("pipe"), "\(refused.stderr)")
        let root = try machine.run(["list"], as: 0)
        #expect(root.status == 0, "root is served while users fill their share: \(root.stderr)")
        let administrator = try machine.run(["list"], as: administrator)
        #expect(administrator.status == 0, "an administrator is served too: \(administrator.stderr)")
    }

    /// A request carries four descriptors at most: one carrying more is dropped as it arrives (the
    /// service holds none of them for its request window), with no answer.
    @Test func aRequestWithMoreDescriptorsThanARequestCarriesIsDropped() throws {
        try machine.startService()
        let connection = try LocalSocket.connect(to: machine.socketPath)
        let streams = (0..<8).map { _ in open("/dev/null", O_RDONLY | O_CLOEXEC) }
        defer { streams.forEach { close($0) } }
        try connection.send(Data("{}".utf8), descriptors: streams)
        let error = #expect(throws: LocalSocketError.self) { try connection.receive(limit: 65536, maximumDescriptors: 0, timeout: 5) }
        #expect(error?.code == ECONNRESET, "\(String(describing: error))")
        let other = try machine.run(["list"], as: user)
        #expect(other.status == 0, "\(other.stderr)")
    }

    /// The service refuses to run as anyone but the policy's systemUser, and a machine whose
    /// service is down says so and how to start it (exit 69).
    @Test func aServiceThatIsNotThereIsNamed() throws {
        let result = try machine.run(["list"], as: user)
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("systemctl enable --now mapgate-system.socket"), "\(result.stderr)")
        let wrongUser = try machine.run(["system-service"], as: user)
        #expect(wrongUser.status == 64, "\(wrongUser.stderr)")
    }

    /// The units the package ships pass systemd's own check.
    @Test func theUnitsVerify() throws {
        let folder = machine.work.file("units")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let names = ["mapgate-system.socket", "mapgate-system-tiles.socket", "mapgate-system-tiles-ipv6.socket", "mapgate-system.service", "mapgate-system-sync.service", "mapgate-system-sync.timer"]
        for name in names {
            // ExecStart must name an existing program: the binary under test stands in for /usr/bin/mapgate.
            let text = try String(contentsOfFile: TestPaths.repository + "/packaging/" + name, encoding: .utf8)
            try text.replacingOccurrences(of: "/usr/bin/mapgate", with: machine.binary).write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
        let result = try runProcess("/usr/bin/systemd-analyze", ["verify", "--man=no"] + names.map { folder + "/" + $0 }, environment: ["SYSTEMD_LOG_LEVEL": "notice"])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }
}
