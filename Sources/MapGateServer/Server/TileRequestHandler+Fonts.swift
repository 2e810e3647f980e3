import FoundationEssentials
import MapGateBase

/// Fonts and MapLibre glyph ranges, made from the machine's fonts.
extension TileRequestHandler {
    /// The names of the fonts glyphs can be made from, as a JSON array.
    func fontList() -> HTTPServerResponse {
        do {
            let body = try ServerDocument.encode(service.glyphs.library.names)
            return HTTPServerResponse(status: 200, headers: Self.anyOrigin + [("Content-Type", "application/json")], body: body)
        } catch {
            return text(500, "cannot write the font list as JSON: \(errorMessage(error))\n", cors: true)
        }
    }

    /// One glyph range (`/fonts/{fontstack}/{start}-{end}.pbf`), MapLibre's glyph protobuf.
    func glyphs(fontstack: String, file: String) -> HTTPServerResponse {
        guard file.hasSuffix(".pbf") else { return text(404, "not found: /fonts/\(fontstack)/\(file)\n", cors: true) }
        do {
            let answer = try service.glyphs.answer(fontstack: fontstack, range: String(file.dropLast(4)))
            // Which installed fonts drew it: the stack's own, then the fallbacks (docs/serving.md).
            // Font names come from font files: percent-encoded, so no byte of theirs can break the head.
            func header(_ names: [String]) -> String { names.map { $0.percentEncoded(allowing: \.isURLPathAllowed) }.joined(separator: ",") }
            let fonts = [("X-Mapgate-Fonts", header(answer.requested)), ("X-Mapgate-Font-Fallback", header(answer.fallback))].filter { !$0.1.isEmpty }
            return HTTPServerResponse(
                status: 200, headers: Self.anyOrigin + [("Content-Type", "application/x-protobuf"), ("Cache-Control", "max-age=86400")] + fonts,
                body: answer.data)
        } catch let error as GlyphError {
            let status: Int
            switch error {
            case .badRange: status = 400
            case .unknownFont: status = 404
            case .fontUnreadable: status = 500
            }
            return text(status, (error.errorDescription ?? "") + "\n", cors: true)
        } catch let error as SharedLibraryError {
            return text(503, (error.errorDescription ?? "") + "\n", cors: true)
        } catch {
            return text(500, "\(error)\n", cors: true)
        }
    }
}
