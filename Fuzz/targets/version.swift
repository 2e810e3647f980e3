import Foundation
@testable import MapGateBase

// AppVersion over up to three strings cut from the input at "|" (a byte no version holds):
// parsing never traps, and the order is a total order consistent with == and hashing:
// exactly one of a < b, a == b, b < a; transitivity over every triple; re-parsing a version's
// text gives it back; `x` == `x.0`; a pre-release sorts below its release.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVersion(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = input(start, count)
    let texts = data.split(separator: 0x7C, maxSplits: 2, omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
    }
    var versions: [AppVersion] = []
    for text in texts {
        guard let version = try? AppVersion(text) else { continue }
        checkAlone(version)
        versions.append(version)
    }
    for a in versions {
        for b in versions {
            checkPair(a, b)
            for c in versions { checkTriple(a, b, c) }
        }
    }
    return 0
}

private func checkAlone(_ v: AppVersion) {
    require(v == v && !(v < v), "\(v) is not equal to itself, or below itself")
    require(!v.components.isEmpty, "\(v) has no components")
    guard let again = try? AppVersion(v.text) else {
        require(false, "the text of \(v) does not parse again")
        return
    }
    require(again == v && again.text == v.text, "\(v) re-parsed is \(again)")
    let numbers = v.components.map(String.init).joined(separator: ".")
    let suffix = v.prerelease.map { "-" + $0 } ?? ""
    for form in [numbers + suffix, numbers + ".0" + suffix, numbers + ".0.0" + suffix] {
        guard let other = try? AppVersion(form) else {
            require(false, "\"\(form)\", a form of \(v), does not parse")
            continue
        }
        checkPair(v, other)
        require(other == v, "\"\(form)\" is not equal to \(v)")
    }
    if v.prerelease != nil, let release = try? AppVersion(numbers) {
        require(v < release && !(release < v), "pre-release \(v) is not below its release \(release)")
    }
}

private func checkPair(_ a: AppVersion, _ b: AppVersion) {
    let relations = [a < b, a == b, b < a].filter { $0 }.count
    require(relations == 1, "\(a) and \(b): < \(a < b), == \(a == b), > \(b < a)")
    require(a == b ? a.hashValue == b.hashValue : true, "\(a) == \(b) but their hashes differ")
    require((a == b) == (b == a), "== is not symmetric for \(a), \(b)")
}

private func checkTriple(_ a: AppVersion, _ b: AppVersion, _ c: AppVersion) {
    if a < b && b < c { require(a < c, "\(a) < \(b) < \(c) but not \(a) < \(c)") }
    if a == b && b == c { require(a == c, "\(a) == \(b) == \(c) but not \(a) == \(c)") }
    if a < b && b == c { require(a < c, "\(a) < \(b) == \(c) but not \(a) < \(c)") }
    if a == b && b < c { require(a < c, "\(a) == \(b) < \(c) but not \(a) < \(c)") }
}
