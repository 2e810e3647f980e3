import Foundation
import MapGate
import TestSupport
import Testing

/// The user's language (issue 29): the gate's story (the grace note, the prompts, the refusal)
/// under Chinese (simplified and traditional), Japanese, Korean and C.UTF-8, from the catalogs
/// scripts/compile-translations makes beside the binary; `--json` the same in every language.
/// The locales come from scripts/install-deps (localedef).
@Suite struct LanguageTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL, "maxPrompts": 2])
    }

    struct Story: Sendable {
        var locale: String
        var note: String
        var firstPrompt: [String]
        var lastPrompt: String
        var refusal: String
        var synced: String
    }

    static let stories = [
        Story(
            locale: "zh_CN.UTF-8", note: "提示：mapgate 1.5.0 已发布，请及时更新（2027年1月31日 起每次使用都会询问）",
            firstPrompt: ["mapgate 1.5.0 已发布（您当前使用的是 1.4.0）。", "更新地址：https://apps.example/mapgate", "还可使用 2 次（含本次）：再使用 1 次后，必须更新 mapgate 才能继续使用。"],
            lastPrompt: "还可使用 1 次（含本次）：本次之后，必须更新 mapgate 才能继续使用。",
            refusal: "错误：需要更新：mapgate 1.4.0 已不能继续使用，请安装 1.5.0 版本（下载地址：https://apps.example/mapgate）", synced: "geo 1：已安装（下载 "),
        Story(
            locale: "zh_TW.UTF-8", note: "提醒：mapgate 1.5.0 已推出，請儘快更新（2027年1月31日 起每次使用都會詢問）",
            firstPrompt: ["mapgate 1.5.0 已推出（您目前的版本是 1.4.0）。", "更新網址：https://apps.example/mapgate", "還有 2 次使用機會（包含這一次）：再使用 1 次後，必須更新 mapgate 才能繼續使用。"],
            lastPrompt: "還有 1 次使用機會（包含這一次）：這次之後，必須更新 mapgate 才能繼續使用。",
            refusal: "錯誤：需要更新：mapgate 1.4.0 已無法繼續使用，請安裝 1.5.0 版（下載網址：https://apps.example/mapgate）", synced: "geo 1：已安裝（下載 "),
        Story(
            locale: "ja_JP.UTF-8", note: "お知らせ：mapgate 1.5.0 が利用可能です。アップデートしてください（2027年1月31日 から使用のたびに確認が表示されます）",
            firstPrompt: ["新しいバージョンの mapgate 1.5.0 が App Store で公開されています（現在のバージョン：1.4.0）。", "アップデート：https://apps.example/mapgate", "残り 2 回（今回を含む）：あと 1 回使用すると、アップデートするまで mapgate を使用できなくなります。"],
            lastPrompt: "残り 1 回（今回を含む）：今回のあとは、アップデートするまで mapgate を使用できません。",
            refusal: "エラー：アップデートが必要です：mapgate 1.4.0 は使用できなくなりました。バージョン 1.5.0 をインストールしてください（入手先：https://apps.example/mapgate）", synced: "geo 1：インストールしました（"),
        Story(
            locale: "ko_KR.UTF-8", note: "알림: mapgate 1.5.0 버전이 나왔습니다. 업데이트해 주세요(2027. 1. 31.부터 사용할 때마다 업데이트 여부를 묻습니다)",
            firstPrompt: ["새 mapgate 1.5.0 버전을 사용할 수 있습니다(현재 버전: 1.4.0).", "업데이트: https://apps.example/mapgate", "이번을 포함해 2회 더 사용할 수 있습니다. 1회 더 사용한 후에는 업데이트해야 mapgate를 계속 사용할 수 있습니다."],
            lastPrompt: "이번을 포함해 1회 더 사용할 수 있습니다. 이번 사용 후에는 업데이트해야 mapgate를 계속 사용할 수 있습니다.",
            refusal: "오류: 업데이트 필요: mapgate 1.4.0 버전은 더 이상 사용할 수 없습니다. 1.5.0 버전을 설치하세요 (설치: https://apps.example/mapgate)", synced: "geo 1: 설치됨("),
        Story(
            locale: "C.UTF-8", note: "note: mapgate 1.5.0 is available; please update (prompts start 2027-01-31)",
            firstPrompt: ["mapgate 1.5.0 is available (you have 1.4.0).", "Update: https://apps.example/mapgate", "2 uses left, this one included: after 1 more mapgate requires the update."],
            lastPrompt: "1 use left, this one included: after this one mapgate requires the update.",
            refusal: "error: update required: mapgate 1.4.0 may no longer be used; install version 1.5.0 from https://apps.example/mapgate", synced: "geo 1: installed ("),
    ]

    func run(_ arguments: [String], at time: String, locale: String) throws -> ProcessResult {
        try mapgate.run(arguments, at: time, environment: ["LANG": locale, "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": ""])
    }

    @Test(arguments: stories)
    func theGatesStoryIsToldInTheUsersLanguage(story: Story) throws {
        let tile = ["tile", "geo", "0", "0", "0", "-o", workspace.work.file("t.png")]
        let sync = try run(["sync", "geo"], at: "2027-01-01 00:00:00", locale: story.locale)
        #expect(sync.status == 0)
        #expect(sync.stdout.hasPrefix(story.synced), "\(sync.stdout)")
        let graced = try run(tile, at: "2027-01-02 00:00:00", locale: story.locale)
        #expect(graced.status == 0)
        #expect(graced.stderr.contains(story.note), "\(graced.stderr)")
        let first = try run(tile, at: "2027-02-01 00:00:00", locale: story.locale)
        #expect(first.status == 0)
        for line in story.firstPrompt { #expect(first.stderr.contains(line), "\(line)\n\(first.stderr)") }
        let last = try run(tile, at: "2027-02-01 00:01:00", locale: story.locale)
        #expect(last.stderr.contains(story.lastPrompt), "\(last.stderr)")
        let refused = try run(tile, at: "2027-02-01 00:02:00", locale: story.locale)
        #expect(refused.status == 77)
        #expect(refused.stderr.contains(story.refusal), "\(refused.stderr)")
        // What scripts read does not change with the language.
        let json = try run(["status", "--json"], at: "2027-02-01 00:03:00", locale: story.locale)
        let english = try run(["status", "--json"], at: "2027-02-01 00:03:00", locale: "C.UTF-8")
        #expect(json.stdout == english.stdout && !json.stdout.isEmpty)
        let refusedJSON = try run(tile + ["--json"], at: "2027-02-01 00:04:00", locale: story.locale)
        #expect(refusedJSON.stdout.contains(#""error":"update required: mapgate 1.4.0 may no longer be used"#), "\(refusedJSON.stdout)")
    }

    /// `mapgate demo` tells the whole story in the user's language (issue 29's "done when"), and
    /// in English with --json.
    @Test(arguments: [
        ("zh_CN.UTF-8", ["第 0 天：mapgate 1.4.0 查询应用商店", "更新提示：还可使用 5 次（含本次）", "已拒绝（退出码 77）：需要更新", "更新到 1.5.0 后立即恢复使用", "demo-world: "]),
        ("zh_TW.UTF-8", ["第 0 天：mapgate 1.4.0 查詢應用程式商店", "更新提示：還有 5 次使用機會（包含這一次）", "已拒絕（結束代碼 77）：需要更新", "更新到 1.5.0 後立即恢復使用", "demo-world: "]),
        ("ja_JP.UTF-8", ["0 日目：mapgate 1.4.0 がストアを確認します", "確認：残り 5 回（今回を含む）", "拒否されました（終了コード 77）：アップデートが必要です", "1.5.0 にアップデートすると", "demo-world: 2026.11 をインストールしました"]),
        ("ko_KR.UTF-8", ["0일째: mapgate 1.4.0 버전이 스토어를 확인합니다", "안내: 이번을 포함해 5회 더 사용할 수 있습니다", "거부됨(종료 코드 77): 업데이트 필요", "1.5.0으로 업데이트하면"]),
    ])
    func theDemoTellsTheStoryInTheUsersLanguage(locale: String, lines: [String]) throws {
        let environment = mapgate.baseEnvironment.merging(["LANG": locale, "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": ""]) { $1 }
        let demo = try runProcess(mapgate.path, ["demo", "--fixtures", TestPaths.repository + "/Fixtures"], environment: environment)
        #expect(demo.status == 0, "\(demo.stderr)")
        for line in lines { #expect(demo.stdout.contains(line), "\(line)\n\(demo.stdout)") }
        let json = try runProcess(mapgate.path, ["demo", "--json", "--fixtures", TestPaths.repository + "/Fixtures"], environment: environment)
        #expect(json.stdout.contains("checks the store") && !json.stdout.contains(lines[0]), "\(json.stdout.prefix(500))")
    }

    /// Tables line up by the columns each character takes on a terminal (a CJK character two),
    /// headings translated: each row's version starts in the column where the heading's does.
    @Test(arguments: [("ja_JP.UTF-8", "名前", "バージョン"), ("ko_KR.UTF-8", "이름", "버전"), ("zh_TW.UTF-8", "名稱", "版本"), ("C.UTF-8", "NAME", "VERSION")])
    func aTableOfCJKNamesLinesUp(locale: String, nameHeading: String, versionHeading: String) throws {
        try workspace.builder.add(
            id: "tokyo", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), version: "2026.11", format: "png",
            overrides: ["name": "東京 とうきょう"])
        try workspace.builder.add(
            id: "seoul", source: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), version: "7", format: "pbf",
            overrides: ["name": "서울"])
        try workspace.builder.write()
        #expect(try run(["sync", "geo", "tokyo", "seoul"], at: "2027-01-01 00:00:00", locale: locale).status == 0)
        let list = try run(["list"], at: "2027-01-01 00:00:00", locale: locale).stdout.split(separator: "\n").map(String.init)
        let heading = try #require(list.first)
        #expect(heading.contains(nameHeading) && heading.contains(versionHeading), "\(heading)")
        /// The terminal column where `text` starts in `line`.
        func column(of text: String, in line: String) -> Int? {
            line.range(of: text).map { TerminalText.width(String(line[..<$0.lowerBound])) }
        }
        let versionColumn = try #require(column(of: versionHeading, in: heading))
        // The day each was installed, as `status` writes it in the language (found by a review:
        // `list` wrote ISO dates beside `status`'s 2027年1月1日).
        let day = ["ja_JP.UTF-8": "2027年1月1日", "ko_KR.UTF-8": "2027. 1. 1.", "zh_TW.UTF-8": "2027年1月1日", "C.UTF-8": "2027-01-01"][locale] ?? "?"
        #expect(list.dropFirst().allSatisfy { $0.contains(day) }, "\(list.joined(separator: "\n"))")
        for (line, version) in zip(list.dropFirst(), ["1", "7", "2026.11"]) {
            // geo, seoul, tokyo: sorted by id.
            #expect(column(of: "  " + version + " ", in: line).map { $0 + 2 } == versionColumn, "\(list.joined(separator: "\n"))")
        }
    }

    /// A publisher's long name is cut in a table, with "…", so that one region does not widen
    /// every row (found by a review: a name of 300 characters made `list` 300 columns wide);
    /// `--json` has it whole, and ids are never cut.
    @Test func aLongNameIsCutInTablesAndWholeInJSON() throws {
        let name = String(repeating: "東京", count: 75) + String(repeating: "x", count: 150)
        try workspace.builder.add(
            id: "tokyo", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), version: "2026.11", format: "png",
            overrides: ["name": name])
        // Cut between escapes, never inside one.
        try workspace.builder.add(
            id: "overrides", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), version: "1", format: "png",
            overrides: ["name": String(repeating: "\u{202E}", count: 20)])
        try workspace.builder.write()
        #expect(try run(["sync", "tokyo", "overrides"], at: "2027-01-01 00:00:00", locale: "ja_JP.UTF-8").status == 0)
        for command in [["list"], ["catalog"]] {
            let lines = try run(command, at: "2027-01-01 00:00:00", locale: "ja_JP.UTF-8").stdout.split(separator: "\n").map(String.init)
            let row = try #require(lines.first { $0.hasPrefix("tokyo ") }, "\(lines)")
            #expect(row.contains(String(repeating: "東京", count: 11) + "東…") && TerminalText.width(row) < 160, "\(command): \(row)")
            let escapes = try #require(lines.first { $0.hasPrefix("overrides ") }, "\(lines)")
            #expect(escapes.contains(String(repeating: "\\u{202e}", count: 5) + "…  "), "\(command): \(escapes)")
        }
        let json = try run(["list", "--json"], at: "2027-01-01 00:00:00", locale: "ja_JP.UTF-8").stdout
        #expect(json.contains(name) || json.contains(String(repeating: "\\u6771\\u4eac", count: 75)), "\(json)")
    }

    /// `--help`, a command's help, a library's error and the manual in each language: translated
    /// (nothing of the English text left but names), aligned by terminal columns, and the manual
    /// a page groff renders without a warning, its headings in the language.
    @Test(arguments: [("zh_CN.UTF-8", "名称"), ("zh_TW.UTF-8", "名稱"), ("ja_JP.UTF-8", "名前"), ("ko_KR.UTF-8", "이름")])
    func helpErrorsAndTheManualAreTranslated(locale: String, nameHeading: String) throws {
        let english = try run(["--help"], at: "2026-12-01 00:00:00", locale: "C.UTF-8").stdout
        let help = try run(["--help"], at: "2026-12-01 00:00:00", locale: locale)
        #expect(help.status == 0)
        for line in ["commands:", "exit codes:", "Run 'mapgate <command> --help' for a command's options.", "  sync      Install or update map regions from the catalog"] {
            #expect(english.contains(line) && !help.stdout.contains(line), "\(locale): \(help.stdout)")
        }
        for command in ["check", "status", "sync", "serve", "publish"] { #expect(help.stdout.contains("  \(command) "), "\(help.stdout)") }
        // The abstracts start in one terminal column, whatever the width of the command names.
        let rows = help.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("  sync ") || $0.hasPrefix("  tile ") }
        #expect(Set(rows.map { TerminalText.width(String($0.prefix(12))) }).count == 1, "\(rows)")
        let tileHelp = try run(["tile", "--help"], at: "2026-12-01 00:00:00", locale: locale).stdout
        #expect(!tileHelp.contains("Write one tile") && tileHelp.contains("--output FILE"), "\(tileHelp)")
        let usage = try run(["tile", "geo"], at: "2026-12-01 00:00:00", locale: locale)
        #expect(usage.status == 64 && !usage.stderr.contains("expected REGION Z X Y") && usage.stderr.contains("REGION Z X Y"), "\(usage.stderr)")
        let missing = try run(["sync", "nosuch"], at: "2026-12-01 00:00:00", locale: locale)
        #expect(missing.status != 0 && !missing.stderr.contains("not in the catalog"), "\(missing.stderr)")
        // The list of what is offered, and of what is installed, in the same language (issue 37).
        #expect(missing.stderr.contains("geo") && !missing.stderr.contains("offered:"), "\(missing.stderr)")
        let notInstalled = try run(["tile", "nosuch", "0", "0", "0", "-o", "/dev/null"], at: "2026-12-01 00:00:00", locale: locale)
        #expect(notInstalled.status != 0 && !notInstalled.stderr.contains("no region is installed"), "\(notInstalled.stderr)")
        let manual = try run(["help", "man"], at: "2026-12-01 00:00:00", locale: locale).stdout
        // Korean breaks lines at spaces (theKoreanManualKeepsItsSpaces); Chinese and Japanese between characters.
        if !locale.hasPrefix("ko") { #expect(manual.contains(".ad l") && manual.contains("\\:"), "CJK break points: \(manual.prefix(400))") }
        let work = try TemporaryDirectory()
        try manual.write(toFile: work.file("mapgate.1"), atomically: true, encoding: .utf8)
        let rendered = try runProcess("/usr/bin/groff", ["-man", "-Tutf8", "-ww", work.file("mapgate.1")], environment: ["LANG": "C.UTF-8"])
        #expect(rendered.status == 0 && rendered.stderr.isEmpty, "\(rendered.stderr)")
        #expect(rendered.stdout.contains(nameHeading), "\(rendered.stdout.prefix(400))")
    }

    /// The lines of the other commands in Japanese and Korean, English in C.UTF-8: `verify` and
    /// `list` without a data directory, `catalog`'s first line, `sync`, `mirror`'s summary and
    /// `remove`.
    @Test(arguments: [("ja_JP.UTF-8", true), ("ko_KR.UTF-8", true), ("C.UTF-8", false)])
    func theOtherCommandsSpeakTheLanguage(locale: String, translated: Bool) throws {
        let at = "2026-12-01 00:00:00"
        let english = [
            (["verify"], "nothing to verify."), (["list"], "See 'mapgate catalog' and 'mapgate sync REGION'."), (["catalog"], "1 region, "),
        ]
        for (arguments, text) in english {
            let result = try run(arguments, at: at, locale: locale)
            #expect(result.status == 0 && result.stdout.contains(text) != translated, "\(locale) \(arguments): \(result.stdout)")
        }
        #expect(try run(["sync", "geo"], at: at, locale: locale).status == 0)
        let work = try TemporaryDirectory()
        let mirror = try run(["mirror", work.file("stick")], at: at, locale: locale)
        #expect(mirror.status == 0 && mirror.stdout.contains("another machine runs") != translated, "\(mirror.stdout)")
        #expect(mirror.stdout.contains("mapgate sync --from"), "\(mirror.stdout)")
        let removed = try run(["remove", "geo"], at: at, locale: locale)
        #expect(removed.status == 0 && removed.stdout.hasPrefix("removed geo") != translated, "\(removed.stdout)")
    }

    /// Every catalog is complete (no untranslated or fuzzy entry) and its formats match the
    /// source's (msgfmt --check); the template holds every marked message (xgettext).
    /// A command's usage line says `[options]` in the user's language (issue 37, part 3), as the
    /// global one says `[global options]`.
    @Test(arguments: [
        ("ja_JP.UTF-8", "mapgate sync [オプション]"), ("ko_KR.UTF-8", "mapgate sync [옵션]"), ("zh_TW.UTF-8", "mapgate sync [選項]"),
        ("zh_CN.UTF-8", "mapgate sync [选项]"), ("C.UTF-8", "mapgate sync [options]"),
    ])
    func aCommandsUsageIsInTheUsersLanguage(locale: String, usage: String) throws {
        let help = try run(["sync", "--help"], at: "2027-01-01 00:00:00", locale: locale)
        #expect(help.status == 0 && help.stdout.contains(usage), "\(help.stdout)")
    }

    /// A catalog signed by a key the policy does not trust is refused in the user's language
    /// (the signature's reasons were English only: issue 37, part 3); the key ids stay as they are.
    @Test(arguments: [
        ("ja_JP.UTF-8", "この鍵は信頼されていません"), ("ko_KR.UTF-8", "신뢰하지 않는 키입니다"), ("zh_TW.UTF-8", "該金鑰不受信任"),
        ("zh_CN.UTF-8", "该密钥不受信任"), ("C.UTF-8", "which is not trusted"),
    ])
    func aSignatureByAnUntrustedKeyIsExplainedInTheUsersLanguage(locale: String, words: String) throws {
        let trusted = try PublisherKey(in: workspace.work.path, name: "trusted")
        let other = try PublisherKey(in: workspace.work.path, name: "other")
        try mapgate.writePolicy([
            "appID": 1, "lookupURL": workspace.lookupURL, "allowInsecureLookup": true, "catalogURL": workspace.catalogURL,
            "trustedKeys": [try trusted.publicKeyLine], "requireSignedCatalog": true,
        ])
        try other.sign(workspace.work.file("www/catalog.json"))
        let refused = try run(["catalog"], at: "2027-01-01 00:00:00", locale: locale)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains(words), "\(refused.stderr)")
    }

    @Test func everyCatalogIsCompleteAndTheTemplateIsCurrent() throws {
        for language in ["zh_CN", "zh_TW", "ja", "ko"] {
            let po = TestPaths.repository + "/po/\(language).po"
            let result = try runProcess("/usr/bin/msgfmt", ["--check", "--statistics", "-o", "/dev/null", po], environment: ["LANG": "C.UTF-8"])
            #expect(result.status == 0, "\(language): \(result.stderr)")
            #expect(!result.stderr.contains("untranslated") && !result.stderr.contains("fuzzy"), "\(language): \(result.stderr)")
        }
        let work = try TemporaryDirectory()
        let fresh = work.file("fresh.pot")
        let extracted = try runProcess(TestPaths.repository + "/scripts/extract-messages", [fresh])
        #expect(extracted.status == 0, "\(extracted.stderr)")
        let committed = try String(contentsOfFile: TestPaths.repository + "/po/mapgate.pot", encoding: .utf8)
        #expect(try String(contentsOfFile: fresh, encoding: .utf8) == committed, "po/mapgate.pot is stale: run scripts/update-pot")
    }

    /// Found by an attack on the languages: a damaged region's reason and the way to repair it,
    /// a gate rule in the user's configuration (and the word "config"), and the completions'
    /// `help` were English in every language; `list` of a --data-dir that is a file said "no
    /// region is installed" with exit 0 (now 74, like `status`).
    @Test(arguments: ["zh_CN.UTF-8", "zh_TW.UTF-8", "ja_JP.UTF-8", "ko_KR.UTF-8"])
    func damageAndConfigurationErrorsAreTranslated(locale: String) throws {
        #expect(try run(["sync", "geo"], at: "2027-01-01 00:00:00", locale: locale).status == 0)
        let file = mapgate.dataDirectory + "/regions/geo.mbtiles"
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.seek(toOffset: 4096)
        handle.write(Data(repeating: 0x47, count: 64))
        try handle.close()
        for command in [["verify"], ["list"]] {
            let result = try run(command, at: "2027-01-01 00:00:00", locale: locale)
            #expect(result.stderr.contains("geo") && result.stderr.contains("mapgate sync geo"), "\(result.stderr)")
            for english in ["installs it again", "its SHA-256 is", "was installed", "(damaged)"] {
                #expect(!result.stderr.contains(english) && !result.stdout.contains(english), "\(locale) \(command): \(result.stderr)\(result.stdout)")
            }
        }
        let config = mapgate.configPath + ".rules.json"
        try #"{"maxPrompts": 1000}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let environment = mapgate.baseEnvironment.merging(["LANG": locale, "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": ""]) { $1 }
        let rules = try runProcess(mapgate.path, ["catalog", "--config", config, "--data-dir", mapgate.dataDirectory], environment: environment)
        #expect(rules.status == 64, "\(rules.stderr)")
        #expect(rules.stderr.contains("maxPrompts") && !rules.stderr.contains("belongs to the managed policy") && !rules.stderr.contains("config "), "\(rules.stderr)")
        let completions = try runProcess(mapgate.path, ["help", "completions", "zsh"], environment: environment)
        #expect(completions.status == 0 && !completions.stdout.contains("help for mapgate or a command"), "\(completions.stdout.suffix(300))")
        let notAFolder = try runProcess(mapgate.path, ["list", "--config", mapgate.configPath, "--data-dir", file], environment: environment)
        #expect(notAFolder.status == 74 && notAFolder.stderr.contains(file), "\(notAFolder.status) \(notAFolder.stderr)")
    }

    /// Found by an attack: Hong Kong and Singapore locales, and `LANGUAGE=zh_Hant` or `zh`,
    /// got English (glibc tries only LANG's own name and the bare language). Hong Kong and
    /// zh_Hant read traditional Chinese, Singapore and a bare zh simplified.
    @Test(arguments: [
        (["LANG": "zh_HK.UTF-8"], "錯誤：未知的指令"), (["LANG": "zh_SG.UTF-8"], "错误：未知命令"),
        (["LANG": "zh_CN.UTF-8", "LANGUAGE": "zh_Hant"], "錯誤：未知的指令"), (["LANG": "ja_JP.UTF-8", "LANGUAGE": "zh"], "错误：未知命令"),
        // A locale of another character set than UTF-8 gets English, not UTF-8 its terminal
        // shows as garbage (found by an attack; scripts/install-deps makes ja_JP.eucJP).
        (["LANG": "ja_JP.eucJP"], "error: unknown command"), (["LANG": "ja_JP.eucJP", "LANGUAGE": "ja"], "error: unknown command"),
    ])
    func otherRegionsAndCharacterSets(_ locale: [String: String], _ expected: String) throws {
        // Without the locale itself, setlocale fails and any run is English: the case would pass
        // without the check it is about (scripts/install-deps makes it).
        if locale["LANG"] == "ja_JP.eucJP" {
            let locales = try runProcess("/usr/bin/locale", ["-a"]).stdout.lowercased()
            try #require(locales.contains("ja_jp.eucjp"), "ja_JP.eucJP is not made on this machine (scripts/install-deps makes it)")
        }
        let environment = mapgate.baseEnvironment.merging(["LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": ""].merging(locale) { $1 }) { $1 }
        let result = try runProcess(mapgate.path, ["nosuch"], environment: environment)
        #expect(result.status == 64 && result.stderr.hasPrefix(expected), "\(locale): \(result.stderr)")
    }

    /// Found by an attack (2026-12-06): in a locale of another character set mapgate wrote UTF-8
    /// as it is, so a region named 国 reached an EUC-JP terminal as e5 9b bd, whose 0x9B an 8-bit
    /// terminal takes for the start of a control sequence, and its own "…" was garbage. It writes
    /// the locale's set now (a character the set lacks as `?`), also in a `--json` run's lines for
    /// people; and an argument that is not UTF-8 is shown as typed, not as U+FFFD.
    @Test func aLocaleOfAnotherCharacterSetGetsItsOwnBytes() throws {
        let locales = try runProcess("/usr/bin/locale", ["-a"]).stdout.lowercased()
        try #require(locales.contains("ja_jp.eucjp"), "ja_JP.eucJP is not made on this machine (scripts/install-deps makes it)")
        let environment = mapgate.baseEnvironment.merging(["LANG": "ja_JP.eucJP", "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "", "LC_CTYPE": ""]) { $1 }
        func bytes(_ arguments: String) throws -> [UInt8] {
            let script = "\"$0\" \(arguments) --config \"$1\" --data-dir \"$2\" 2>&1"
            return [UInt8](try runProcess("/bin/sh", ["-c", script, mapgate.path, mapgate.configPath, mapgate.dataDirectory], environment: environment).stdoutData)
        }
        func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
            haystack.count >= needle.count && (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
        }
        for run in ["tile 国🙂 0 0 0", "--json tile 国🙂 0 0 0"] {
            let written = try bytes(run)
            #expect(contains(written, [0xB9, 0xF1, 0x3F]), "\(run): 国 in EUC-JP, then ? for 🙂: \(written)")
            #expect(!written.contains { (0x80...0x8D).contains($0) || (0x90...0x9F).contains($0) }, "\(run): a C1 byte: \(written)")
        }
        // The JSON line: UTF-8 still, all ASCII, 🙂 as a surrogate pair; read back as it was.
        let json = try bytes("--json tile 国🙂 0 0 0").split(separator: 0x0A).map(Array.init).first { $0.first == UInt8(ascii: "{") }
        let line = try #require(json)
        #expect(line.allSatisfy { $0 < 0x80 } && contains(line, Array("\\u56fd\\ud83d\\ude42".utf8)), "\(String(decoding: line, as: UTF8.self))")
        #expect((try MapGateBinary.json(String(decoding: line, as: UTF8.self))["error"] as? String)?.contains("国🙂") == true)
        // The C library's reasons too (strerror came in EUC-JP, read as UTF-8: "??????G?").
        let busy = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(busy) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(busy, $0, length) == 0 && listen(busy, 1) == 0 && getsockname(busy, $0, &length) == 0 } }
        #expect(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let refused = try bytes("serve --port \(port)")
        #expect(refused.allSatisfy { $0 < 0x80 } && contains(refused, Array("Address already in use".utf8)), "\(String(decoding: refused, as: UTF8.self))")
        let typed = try bytes("export x \"$(printf 'a\\306\\374\\313\\334.pmtiles')\"")
        #expect(contains(typed, Array("(a".utf8) + [0xC6, 0xFC, 0xCB, 0xDC] + Array(".pmtiles) is not UTF-8".utf8)), "\(String(decoding: typed, as: UTF8.self))")
    }

    /// Found by an attack: the Korean manual ran words together where a translation's text
    /// broke a line between two Hangul words (joined as Chinese and Japanese are, with no space),
    /// and broke lines inside words (a break point after every syllable). Korean is joined with a
    /// space and broken only at spaces.
    @Test func theKoreanManualKeepsItsSpaces() throws {
        let manual = try run(["help", "man"], at: "2026-12-01 00:00:00", locale: "ko_KR.UTF-8").stdout
        #expect(!manual.contains(/\\\[u(A|B|C|D)[0-9A-F]{3}\]\\:/), "a break point after a Hangul syllable")
        let work = try TemporaryDirectory()
        try manual.write(toFile: work.file("mapgate.1"), atomically: true, encoding: .utf8)
        let rendered = try runProcess("/usr/bin/groff", ["-man", "-Tutf8", "-rLL=70n", work.file("mapgate.1")], environment: ["LANG": "C.UTF-8"])
        let text = rendered.stdout.replacing(/\x{08}./, with: "").split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let po = try String(contentsOfFile: TestPaths.repository + "/po/ko.po", encoding: .utf8)
        var spaced = 0
        // A line break inside a message: `…WORD\n"` then `"WORD…` on the next line of the file.
        for match in po.matches(of: /([가-힣]+)\\n"\n"([가-힣]+)/) {
            let (before, after) = (String(match.1), String(match.2))
            #expect(!text.contains(before + after), "\(before)\(after) run together")
            if text.contains(before + " " + after) { spaced += 1 }
        }
        #expect(spaced > 10, "only \(spaced) of the translations' line breaks were found in the page")
        #expect(!text.contains(/\n[,.;:)]/))
    }

    /// A Wi-Fi login page in the store lookup's place is the network's, said in the user's
    /// language as the catalog's is, 69 (found by an attack: "store lookup: unreadable answer
    /// from …", in English inside the Japanese line, 65, on a machine that had only its maps
    /// from a stick).
    @Test func aLoginPageInTheLookupsPlaceIsSaidAsTheNetworks() throws {
        try workspace.work.write("www/portal.html", "<!DOCTYPE html><html><body>Sign in to the hotel Wi-Fi</body></html>")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.origin.baseURL + "/portal.html", "catalogURL": workspace.catalogURL, "maxPrompts": 2])
        let result = try run(["check"], at: "2026-12-01 00:00:00", locale: "ja_JP.UTF-8")
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("ストアではなくウェブページ（HTML）が返されました"), "\(result.stderr)")
        #expect(!result.stderr.contains("unreadable answer"), "\(result.stderr)")
    }

    /// Found by an attack: a catalog that cannot be reached was said with an ASCII colon after
    /// its URL in Chinese and Japanese ("目录 http://…: 无法连上"), where every other line has "：".
    @Test(arguments: [("zh_CN.UTF-8", "："), ("ja_JP.UTF-8", "：")])
    func anUnreachableCatalogIsSaidWithTheLanguagesColon(locale: String, colon: String) throws {
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": "http://127.0.0.1:1/catalog.json", "maxPrompts": 2])
        let result = try run(["catalog"], at: "2026-12-01 00:00:00", locale: locale)
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("http://127.0.0.1:1/catalog.json" + colon), "\(result.stderr)")
    }

    /// A test that fails when a user-visible string is not marked: every literal of two words or
    /// more where the help's tables, usage errors, console messages and the library's errors take
    /// their text goes through `localized(...)` (or says why not: "(not translated: …)").
    @Test func everyUserVisibleLiteralIsMarked() throws {
        let result = try runProcess(TestPaths.repository + "/scripts/extract-messages", ["--unmarked"])
        #expect(result.status == 0 && result.stdout.isEmpty, "not marked for translation:\n\(result.stdout)")
    }

    /// Issue 37: the check once read `"""` as the empty literal `""` and let every unmarked
    /// multi-line discussion through (`sync`'s and `list`'s were English in every language).
    /// A tree with one such discussion and one unmarked option help must fail it.
    @Test func theUnmarkedCheckCatchesAMultiLineDiscussion() throws {
        let work = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: work.file("probe/scripts"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: work.file("probe/Sources/Probe"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestPaths.repository + "/scripts/extract-messages", toPath: work.file("probe/scripts/extract-messages"))
        try work.write("probe/Sources/Probe/ProbeCommand.swift", #"""
            struct ProbeCommand {
                static let discussion = """
                    Writes every tile of the region, one line each.
                    """
                static let options = [OptionSpec(name: "x", help: "an option nobody translated")]
                var description: String {
                    switch self {
                    case .malformed(let url):
                        "store lookup: unreadable answer from \(url)"
                    }
                }
            }
            """#)
        let result = try runProcess(work.file("probe/scripts/extract-messages"), ["--unmarked"])
        #expect(result.status != 0)
        #expect(result.stdout.contains("ProbeCommand.swift:2"), "\(result.stdout)")
        #expect(result.stdout.contains("ProbeCommand.swift:5"), "\(result.stdout)")
        // A literal on its own line after a `case …:` (found by an attack: the store lookup's
        // errors were English in every language, and the check let them through).
        #expect(result.stdout.contains("ProbeCommand.swift:8"), "\(result.stdout)")
    }
}
