import Foundation

extension Catalog {
    /// Fetches and validates the catalog at `url` (http, https or file).
    public static func fetch(from url: String, client: HTTPClient) throws -> Catalog {
        let response: HTTPResponse
        do {
            response = try client.get(HTTPRequest(url: url, connectTimeout: 10, totalTimeout: 60), maxBodyBytes: 16 << 20)
        } catch let error as HTTPError {
            throw GeneralFailure("catalog \(url): \(error.localizedDescription)", kind: .unavailable)
        }
        // file:// answers carry no status.
        guard response.status == 0 || (200..<300).contains(response.status) else {
            throw GeneralFailure("catalog \(url): HTTP \(response.status)", kind: .unavailable)
        }
        return try parse(response.body, sourceURL: url)
    }
}
