import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// The update prompt where the person looking at the map is (issue 37, part 2): headless
/// Chromium in Traditional Chinese and Japanese opens the viewer of a server that runs past the
/// grace; the page shows the prompt in its language with the version, the release notes, the uses
/// left and the two buttons (Update now links to the store), and once the gate is closed the
/// overlay says what to install, in the page's language, with a link to the store.
@Suite(.tags(.browser)) struct ViewerPromptBrowserTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }
    let during = "2027-02-05 00:00:00"

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0", notes: "Safer downloads.\n<b>New</b> regions.")
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "plain"], at: "2027-01-01 00:00:00").status == 0)
    }

    /// The prompt's line of uses left (the page's script data holds every count's words too).
    static func usesLeft(in prompt: String) -> String {
        guard let start = prompt.range(of: #"<p class="left">"#), let end = prompt[start.upperBound...].range(of: "</p>") else { return "" }
        return String(prompt[start.upperBound..<end.lowerBound])
    }

    /// The page as Chromium has it once its scripts ran.
    func renderedDOM(_ url: String, language: String, until done: (String) -> Bool) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: ViewerBrowserTests.chromium) else {
            throw MissingFixture(path: "\(ViewerBrowserTests.chromium) (Debian package chromium; .ci/run installs it)")
        }
        var page = ""
        for budget in [5000, 15000, 30000] {
            let result = try runProcess(
                ViewerBrowserTests.chromium,
                [
                    "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(workspace.work.file("profile-\(language)"))",
                    "--window-size=800,600", "--virtual-time-budget=\(budget)", "--dump-dom", "--lang=\(language)", "--accept-lang=\(language)", url,
                ], environment: ["HOME": workspace.work.path], timeout: 120)
            page = result.stdout
            if done(page) { break }
        }
        return page
    }

    struct Words: Sendable {
        var language: String
        var available: String
        var updateNow: String
        var later: String
        var required: String
        var store: String
        var zoomIn: String
        /// The uses left the terminal's question gave (5, this one included).
        var left: String
    }

    static let languages = [
        Words(language: "zh-TW", available: "mapgate 1.5.0", updateNow: "立即更新", later: "稍後更新", required: "需要更新", store: "請安裝 mapgate 1.5.0 以繼續使用這些地圖。", zoomIn: "放大",
            left: "還有 5 次使用機會（包含這一次）"),
        Words(language: "ja", available: "mapgate 1.5.0", updateNow: "今すぐアップデート", later: "後で", required: "アップデートが必要です", store: "これらの地図を引き続き使うには、mapgate 1.5.0 をインストールしてください。", zoomIn: "拡大",
            left: "残り 5 回（今回を含む）"),
    ]

    @Test(arguments: languages)
    func theViewerAsksInThePagesLanguageThenShowsTheClosedGate(_ words: Words) throws {
        guard FileManager.default.fileExists(atPath: "/usr/share/javascript/leaflet/leaflet.js") else {
            throw MissingFixture(path: "/usr/share/javascript/leaflet/leaflet.js (Debian package libjs-leaflet)")
        }
        let started = try mapgate.serve(at: during, environment: ["MAPGATE_GATE_REFRESH_SECONDS": "0.2"])
        defer {
            started.process.signal(SIGTERM)
            _ = started.process.wait()
        }
        let health = try MapGateBinary.json(String(decoding: try HTTPClient().get(HTTPRequest(url: started.base + "/health")).body, as: UTF8.self))
        let update = try #require(health["update"] as? [String: Any], "\(health)")
        #expect(update["state"] as? String == "prompting" && update["version"] as? String == "1.5.0", "\(update)")
        #expect(update["storeURL"] as? String == "https://apps.example/mapgate")

        let page = try renderedDOM(started.base + "/view/plain", language: words.language) { $0.contains(#"id="update-now""#) && $0.contains("display: block") }
        let prompt = try #require(page.range(of: #"<div id="prompt""#).map { String(page[$0.lowerBound...].prefix(1500)) }, "\(page.suffix(2000))")
        #expect(prompt.contains("display: block"), "the prompt is not shown: \(prompt)")
        #expect(prompt.contains(words.available), "\(prompt)")
        #expect(prompt.contains("Safer downloads.") && prompt.contains("&lt;b&gt;New&lt;/b&gt; regions."), "release notes, as text: \(prompt)")
        #expect(prompt.contains(words.updateNow) && prompt.contains(words.later), "\(prompt)")
        #expect(prompt.contains(#"href="https://apps.example/mapgate""#), "Update now opens the store: \(prompt)")
        // The raster viewer's own buttons speak the page's language too.
        #expect(page.contains(#"title="\#(words.zoomIn)""#), "Leaflet's zoom buttons: \(page.prefix(3000))")
        // The uses left as the terminal said them: the server's use, counted at start, included
        // (found by an attack: the page said 4, one fewer than the terminal).
        #expect(Self.usesLeft(in: prompt).hasPrefix(words.left), "\(Self.usesLeft(in: prompt))")

        // The gate closes (the other uses spent elsewhere): the overlay in the page's language.
        for _ in 0..<4 {
            let spent = try mapgate.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], at: during)
            #expect(spent.status == 0, "\(spent.status): \(spent.stderr)")
        }
        let refused = try mapgate.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], at: during)
        #expect(refused.status == 77, "\(refused.status): \(refused.stderr)")
        _ = try waitUntil(timeout: 5) { (try? HTTPClient().get(HTTPRequest(url: started.base + "/health")).status) == 503 }
        // A page loaded now is the server's closed page; one already open shows the same overlay.
        let closed = try renderedDOM(started.base + "/view/plain", language: words.language) { $0.contains("apps.example") }
        let overlay = try #require(closed.range(of: #"id="gate""#).map { String(closed[$0.lowerBound...].prefix(800)) }, "\(closed.suffix(1500))")
        #expect(overlay.contains(words.required) && overlay.contains(words.store), "\(overlay)")
        #expect(overlay.contains(#"href="https://apps.example/mapgate""#), "a link to the store: \(overlay)")
        // The region list, open before and after: its script shows the same overlay, with the link.
        let list = try renderedDOM(started.base + "/", language: words.language) { $0.contains(#"id="store-link""#) }
        let listed = try #require(list.range(of: #"id="gate""#).map { String(list[$0.lowerBound...].prefix(800)) }, "\(list.suffix(1500))")
        #expect(listed.contains(words.required) && listed.contains(words.store) && listed.contains(#"id="store-link""#), "\(listed)")
    }

    /// Found by an attack: a server started with the last use serves out its day (`/health`:
    /// gate open, `update.state` closed), and its page covered the map with "update required"
    /// while the tiles came. The page asks as the terminal did, this use the last, over the map.
    @Test func theLastUsesDayShowsTheMapAndTheLastQuestion() throws {
        guard FileManager.default.fileExists(atPath: "/usr/share/javascript/leaflet/leaflet.js") else {
            throw MissingFixture(path: "/usr/share/javascript/leaflet/leaflet.js (Debian package libjs-leaflet)")
        }
        for _ in 0..<4 { #expect(try mapgate.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], at: during).status == 0) }
        let started = try mapgate.serve(at: during, environment: ["MAPGATE_GATE_REFRESH_SECONDS": "0.2"])
        defer {
            started.process.signal(SIGTERM)
            _ = started.process.wait()
        }
        let health = try MapGateBinary.json(String(decoding: try HTTPClient().get(HTTPRequest(url: started.base + "/health")).body, as: UTF8.self))
        #expect(health["gate"] as? String == "open", "\(health)")
        #expect((health["update"] as? [String: Any])?["state"] as? String == "closed", "\(health)")
        // Waited for until the prompt itself is shown: another element's "display: block" let the
        // page be read before the question opened (CI, six suites at once).
        let page = try renderedDOM(started.base + "/view/plain", language: "ja") { page in
            page.range(of: #"<div id="prompt""#).map { page[$0.lowerBound...].prefix(120).contains("display: block") } ?? false
        }
        let prompt = try #require(page.range(of: #"<div id="prompt""#).map { String(page[$0.lowerBound...].prefix(1500)) }, "\(page.suffix(2000))")
        #expect(prompt.contains("display: block") && Self.usesLeft(in: prompt).hasPrefix("残り 1 回（今回を含む）"), "\(prompt)")
        let overlay = page.range(of: #"id="gate""#).map { String(page[$0.lowerBound...].prefix(300)) } ?? ""
        #expect(!overlay.contains("アップデートが必要です"), "the map is covered: \(overlay)")
    }

    /// Found by an attack: while the server cannot check the gate (its state held by another
    /// program), it answers tiles 503, and an open page showed nothing of it (old tiles stayed,
    /// as if all were well). The page says the maps are paused, in its language, over the map.
    @Test func aGateThatCannotBeCheckedPausesThePageInItsLanguage() throws {
        let started = try mapgate.serve(at: during, environment: ["MAPGATE_GATE_REFRESH_SECONDS": "0.2"])
        defer {
            started.process.signal(SIGTERM)
            _ = started.process.wait()
        }
        let holders = try [mapgate.dataDirectory + "/state.sqlite", mapgate.stateHome + "/mapgate/state.sqlite"].map { path in
            let holder = try SQLiteDatabase(path: path, mode: .readWriteCreate)
            try holder.execute("BEGIN IMMEDIATE")
            return holder
        }
        defer { for holder in holders { try? holder.execute("ROLLBACK") } }
        func gate() -> String? {
            guard let body = try? HTTPClient().get(HTTPRequest(url: started.base + "/health")).body else { return nil }
            return (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["gate"] as? String
        }
        #expect(waitUntil(timeout: 60) { gate() == "failing" }, "\(gate() ?? "no answer")")
        let page = try renderedDOM(started.base + "/", language: "ja") { $0.contains("地図を一時停止しています") }
        let overlay = try #require(page.range(of: #"id="gate""#).map { String(page[$0.lowerBound...].prefix(800)) }, "\(page.suffix(1500))")
        #expect(overlay.contains("display: block") && overlay.contains("地図を一時停止しています"), "\(overlay)")
        #expect(overlay.contains("アップデートの要件を確認できません"), "\(overlay)")
    }

    /// The viewer's page of `plain` as the server sends it in Japanese, with Leaflet and a
    /// `/health` answer, saved into a folder (returned) for another origin to serve.
    func savedViewerPage() throws -> String {
        guard FileManager.default.fileExists(atPath: "/usr/share/javascript/leaflet/leaflet.js") else {
            throw MissingFixture(path: "/usr/share/javascript/leaflet/leaflet.js (Debian package libjs-leaflet)")
        }
        let root = workspace.work.file("page-origin")
        try FileManager.default.createDirectory(atPath: root + "/_leaflet", withIntermediateDirectories: true)
        let started = try mapgate.serve(at: "2027-01-01 00:00:00")
        for (path, file) in [("/view/plain", "view.html"), ("/_leaflet/leaflet.js", "_leaflet/leaflet.js"), ("/_leaflet/leaflet.css", "_leaflet/leaflet.css"), ("/health", "health")] {
            let answer = try HTTPClient().get(HTTPRequest(url: started.base + path, headers: [("Accept-Language", "ja")]))
            #expect(answer.status == 200, "\(path): \(answer.status)")
            try answer.body.write(to: URL(fileURLWithPath: root + "/" + file))
        }
        started.process.signal(SIGTERM)
        _ = started.process.wait()
        return root
    }

    /// A Python origin serving the saved page's folder `root`, whose `/health` answers as the
    /// Python lines `onHealth` say (indented for `do_GET`, `asked[0]` counting the asks; without a
    /// `return`, the file `self.path` then names is served). Returns it and its page's URL.
    func scriptedOrigin(root: String, onHealth: String) throws -> (BackgroundProcess, String) {
        let script = workspace.work.file("origin-\(UUID().uuidString).py")
        try """
            import http.server, os, sys, time
            os.chdir(sys.argv[1])
            asked = [0]
            class Handler(http.server.SimpleHTTPRequestHandler):
                def do_GET(self):
                    if self.path.startswith('/health'):
                        asked[0] += 1
            \(onHealth.split(separator: "\n").map { "            " + $0 }.joined(separator: "\n"))
                    super().do_GET()
                def log_message(self, *args):
                    pass
            server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
            server.daemon_threads = True
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let origin = try BackgroundProcess("/usr/bin/python3", [script, root])
        guard let port = origin.firstLine().flatMap({ Int($0) }) else {
            origin.stop()
            throw MissingFixture(path: "a Python origin: \(origin.stderr)")
        }
        return (origin, "http://127.0.0.1:\(port)/view.html")
    }

    /// A page whose gate closed while it was open keeps its overlay when the session ends (the
    /// machine's port then says no session): the bar alone said to run `mapgate open`, which
    /// would refuse (found by an attack). Its first `/health` says closed, every later one no
    /// session (the next look comes 2 s after a tile fails).
    @Test func aClosedPageKeepsSayingSoWhenTheSessionEnds() throws {
        let root = try savedViewerPage()
        try #"{"gate":"closed","regions":1,"requiredVersion":"1.5.0","status":"refusing"}"#.write(toFile: root + "/closed", atomically: true, encoding: .utf8)
        try SystemMachine.closedDoorHealth.write(toFile: root + "/no-session", atomically: true, encoding: .utf8)
        let (origin, url) = try scriptedOrigin(root: root, onHealth: "self.path = '/closed' if asked[0] == 1 else '/no-session'")
        defer { origin.stop() }
        let result = try runProcess(
            "/usr/bin/python3",
            [TestPaths.repository + "/Tests/browser/dom-when.py", ViewerBrowserTests.chromium, url, "60", #"data-problem="no-session""#, "--",
             "--user-data-dir=\(workspace.work.file("profile-ending"))", "--window-size=800,600", "--lang=ja", "--accept-lang=ja"],
            environment: ["HOME": workspace.work.path], timeout: 120)
        #expect(result.status == 0, "exit \(result.status): \(result.stderr.suffix(1500))")
        let gate = result.stdout.range(of: #"id="gate""#).map { String(result.stdout[$0.lowerBound...].prefix(600)) } ?? ""
        #expect(gate.contains("アップデートが必要です") && gate.contains("display: block"), "the closed gate's overlay went: \(gate)")
    }

    /// A `/health` that never answers (a port held with nobody answering on it) is given up after
    /// 10 s, and the bar says the server is not answering; in real time (`dom-when.py`), since
    /// headless Chromium's virtual time does not move while a fetch is pending.
    @Test func aHealthThatNeverAnswersIsGivenUpAfterTenSeconds() throws {
        let root = try savedViewerPage()
        let (origin, url) = try scriptedOrigin(root: root, onHealth: "time.sleep(120)\nreturn")
        defer { origin.stop() }
        // The bar's mark (the words are in the page's script from the start).
        let notAnswering = #"data-problem="offline""#
        let began = Date()
        let result = try runProcess(
            "/usr/bin/python3",
            [TestPaths.repository + "/Tests/browser/dom-when.py", ViewerBrowserTests.chromium, url, "60", notAnswering, "--",
             "--user-data-dir=\(workspace.work.file("profile-stall"))", "--window-size=800,600", "--lang=ja", "--accept-lang=ja"],
            environment: ["HOME": workspace.work.path], timeout: 120)
        let waited = Date().timeIntervalSince(began)
        #expect(result.status == 0 && result.stdout.contains(notAnswering), "exit \(result.status): \(result.stderr.suffix(1500))")
        let bar = result.stdout.range(of: #"<div id="update""#).map { String(result.stdout[$0.lowerBound...].prefix(400)) } ?? ""
        #expect(bar.contains("地図サーバーが応答していません"), "\(bar)")
        #expect(waited >= 9.5, "the page gave up after \(waited) s, before its 10 s")
    }

    /// The bar's two notices, on a page that stays open while the server changes: the viewer's
    /// page as the server sent it, with Leaflet and a `/health` answer, is served by a plain
    /// origin that has no TileJSON for the region (as a server does once the region is removed),
    /// then the answer system mode's port gives between sessions, then no `/health` at all (as when
    /// nothing answers). Each notice is in the page's language.
    @Test func anOpenPageSaysWhenItsRegionIsGoneOrTheServerDoesNotAnswer() throws {
        let root = try savedViewerPage()
        let origin = try TestOrigin(root: root)
        defer { origin.stop() }
        func bar(_ page: String) -> String { page.range(of: #"<div id="update""#).map { String(page[$0.lowerBound...].prefix(400)) } ?? "" }
        let removed = try renderedDOM(origin.baseURL + "/view.html", language: "ja") { $0.contains("この地域はもうインストールされていません") }
        #expect(bar(removed).contains("この地域はもうインストールされていません") && bar(removed).contains("display: block"), "\(bar(removed)) \(removed.suffix(1200))")
        // System mode between sessions: the machine's port answers /health for the service
        // (`SystemModeTests` checks that this is its answer).
        try SystemMachine.closedDoorHealth.write(toFile: root + "/health", atomically: true, encoding: .utf8)
        let closed = try renderedDOM(origin.baseURL + "/view.html", language: "ja") { $0.contains("このマシンで開いている地図セッションはありません") }
        #expect(bar(closed).contains("このマシンで開いている地図セッションはありません") && bar(closed).contains("display: block"), "\(bar(closed)) \(closed.suffix(1200))")
        try FileManager.default.removeItem(atPath: root + "/health")
        let unanswered = try renderedDOM(origin.baseURL + "/view.html", language: "ja") { $0.contains("地図サーバーが応答していません") }
        #expect(bar(unanswered).contains("地図サーバーが応答していません"), "\(bar(unanswered)) \(unanswered.suffix(1200))")
    }
}
