import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Issue 37, part 3: what came out in another language, or in words that were not true.
@Suite struct LanguageRoundTwoTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        // A lookup that reaches nothing: the store has never answered.
        try mapgate.configure(["appID": 1, "lookupURL": "http://127.0.0.1:1/lookup.json", "catalogURL": workspace.catalogURL])
    }

    func run(_ arguments: [String], locale: String, environment: [String: String] = [:]) throws -> ProcessResult {
        try mapgate.run(arguments, at: "2027-01-01 00:00:00", environment: ["LANG": locale, "LANGUAGE": "", "LC_ALL": ""].merging(environment) { $1 })
    }

    /// A network failure says so in the user's language, with libcurl's own words after it, and
    /// `status --json` keeps it in English (JSON is never translated), whoever ran the lookup.
    @Test func aLookupErrorIsTranslatedOnTheTerminalAndEnglishInJSON() throws {
        let check = try run(["check"], locale: "ja_JP.UTF-8")
        #expect(check.status == 69)
        #expect(check.stderr.contains("ストアに接続できません（") && check.stderr.contains("curl error 7"), "\(check.stderr)")
        let json = try MapGateBinary.json(try run(["status", "--json"], locale: "ja_JP.UTF-8").stdout)
        let error = try #require(json["lookupError"] as? String)
        #expect(error.hasPrefix("store lookup: the store cannot be reached ("), "\(error)")
        let isASCII = error.unicodeScalars.allSatisfy { $0.isASCII }
        #expect(isASCII, "translated text in --json: \(error)")
    }

    /// `catalog`'s STATUS column is in the user's language; `--json` keeps its stable values.
    @Test func theCatalogsStatusColumnIsTranslated() throws {
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        #expect(try run(["sync", "plain"], locale: "C.UTF-8").status == 0)
        let japanese = try run(["catalog"], locale: "ja_JP.UTF-8")
        #expect(japanese.stdout.contains("インストール済み") && japanese.stdout.contains("未インストール"), "\(japanese.stdout)")
        #expect(!japanese.stdout.contains("not installed") && !japanese.stdout.contains(" installed"), "\(japanese.stdout)")
        let json = try run(["catalog", "--json"], locale: "ja_JP.UTF-8")
        #expect(json.stdout.contains(#""status":"installed""#) && json.stdout.contains(#""status":"not-installed""#), "\(json.stdout)")
    }

    /// Found by the language attack of 2026-12-05: `verify`'s " (tiles HASH)" was English in every
    /// language, and `--json` given as an option's value (`-o --json`) made a run English.
    @Test func verifysTilesHashAndAJSONLookingValueAreInTheUsersLanguage() throws {
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        #expect(try run(["sync", "plain"], locale: "C.UTF-8").status == 0)
        let verified = try run(["verify"], locale: "ja_JP.UTF-8")
        #expect(verified.status == 0 && verified.stdout.contains("：正常（タイル ") && !verified.stdout.contains("(tiles"), "\(verified.stdout)")
        let english = try run(["verify"], locale: "C.UTF-8")
        #expect(english.stdout.contains(": ok (tiles "), "\(english.stdout)")
        let valued = try run(["tile", "nosuch", "0", "0", "0", "-o", "--json"], locale: "ja_JP.UTF-8")
        #expect(valued.status == 1 && valued.stderr.contains("エラー：地域 nosuch："), "\(valued.stderr)")
    }

    /// Why a region is left out of a mirror is said in the user's language on the terminal, and
    /// in English in `mirror.json` (a file other machines read) and `--json`.
    @Test func aMirrorsLeftOutReasonIsTranslatedOnTheTerminalOnly() throws {
        // The test builder's gzip is not publish's: the package cannot be rebuilt byte for byte.
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        #expect(try run(["sync", "plain"], locale: "C.UTF-8").status == 0)
        let stick = workspace.work.file("stick")
        let japanese = try run(["mirror", stick], locale: "ja_JP.UTF-8")
        #expect(japanese.status == 0, "\(japanese.stderr)")
        #expect(japanese.stderr.contains("バイト単位で同じに作り直せません"), "\(japanese.stderr)")
        let manifest = try String(contentsOfFile: stick + "/mirror.json", encoding: .utf8)
        #expect(manifest.contains("cannot be rebuilt byte for byte"), "\(manifest)")
        let json = try run(["mirror", stick, "--json"], locale: "ko_KR.UTF-8")
        #expect(json.stdout.contains("cannot be rebuilt byte for byte"), "\(json.stdout)")
    }

    /// A catalog that cannot be reached is said in the user's language, curl's words after it,
    /// then what works without the network (found by an attack: no way on was said).
    @Test(arguments: [
        ("ja_JP.UTF-8", "サーバーに到達できないか、接続を拒否されました", "mapgate catalog --saved"), ("ko_KR.UTF-8", "서버에 연결할 수 없거나 연결이 거부되었습니다", "mapgate sync --from"),
        ("zh_TW.UTF-8", "無法連上伺服器，或連線被拒絕", "mapgate catalog --saved"),
        ("C.UTF-8", "the server cannot be reached or refused the connection", "; without the network, 'mapgate catalog --saved' lists the catalog the last sync kept"),
    ])
    func anUnreachableCatalogIsSaidInTheUsersLanguage(_ locale: String, _ sentence: String, _ wayOn: String) throws {
        try mapgate.configure(["appID": 1, "lookupURL": "http://127.0.0.1:1/lookup.json", "catalogURL": "http://127.0.0.1:1/catalog.json"])
        for command in [["catalog"], ["sync", "geo"]] {
            let result = try run(command, locale: locale)
            #expect(result.status == 69)
            #expect(result.stderr.contains(sentence) && result.stderr.contains("curl error 7"), "\(result.stderr)")
            #expect(result.stderr.contains(wayOn), "\(result.stderr)")
        }
    }

    /// A store never reached is not "up to date": nobody knows. In every language.
    @Test(arguments: [("C.UTF-8", "not checked yet"), ("zh_TW.UTF-8", "尚未檢查"), ("ja_JP.UTF-8", "未確認"), ("ko_KR.UTF-8", "아직 확인하지 않음")])
    func aStoreNeverReachedIsNotUpToDate(locale: String, words: String) throws {
        let status = try run(["status"], locale: locale)
        #expect(status.status == 0)
        #expect(status.stdout.contains(words), "\(status.stdout)")
    }

    /// The last lookup in the machine's local time, as a clock on the wall reads it.
    @Test func theLastLookupIsInLocalTime() throws {
        try workspace.publish(version: "1.5.0")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
        #expect(try run(["check"], locale: "C.UTF-8").status == 0)
        let status = try run(["status"], locale: "ja_JP.UTF-8", environment: ["TZ": "Asia/Tokyo"])
        #expect(status.stdout.contains("2027-01-01 09:00 (UTC+9)"), "\(status.stdout)")
    }

    /// A day is the day the user's clock reads (found by an attack: installed at 05:00 in Tokyo,
    /// `list` said the day before, beside a last lookup in local time).
    @Test func daysAreTheDaysTheUsersClockReads() throws {
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "plain"], at: "2026-12-31 20:00:00").status == 0)
        let tokyo = try run(["list"], locale: "ja_JP.UTF-8", environment: ["TZ": "Asia/Tokyo"])
        #expect(tokyo.stdout.contains("2027年1月1日") && !tokyo.stdout.contains("12月31日"), "\(tokyo.stdout)")
        let london = try run(["list"], locale: "ja_JP.UTF-8", environment: ["TZ": "Europe/London"])
        #expect(london.stdout.contains("2026年12月31日"), "\(london.stdout)")
    }

    /// The manual names what goes with mapgate.
    @Test func theManualSeesAlsoMinisignAndSqlite3() throws {
        let page = try run(["help", "man"], locale: "C.UTF-8")
        #expect(page.status == 0, "\(page.stderr)")
        #expect(page.stdout.contains(".BR minisign (1),") && page.stdout.contains(".BR sqlite3 (1),"), "\(page.stdout.suffix(400))")
    }

    /// `sync`'s discussion and the configuration keys' help were English in every language.
    @Test func syncsDiscussionAndTheConfigurationKeysAreTranslated() throws {
        let help = try run(["--help"], locale: "ko_KR.UTF-8")
        #expect(help.stdout.contains("배포자 지역 카탈로그의 미러"), "\(help.stdout)")
        let sync = try run(["help", "sync"], locale: "ja_JP.UTF-8")
        #expect(sync.stdout.contains("地域名を指定するとその地域をインストールまたは更新し"), "\(sync.stdout)")
        let list = try run(["help", "list"], locale: "zh_TW.UTF-8")
        #expect(list.stdout.contains("使用 --json 時，每個地區一行一個物件"), "\(list.stdout)")
    }
}

