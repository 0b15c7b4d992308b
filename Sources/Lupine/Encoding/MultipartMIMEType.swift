import Foundation

/// The MIME type a multipart file part gets from its file name extension.
///
/// Alamofire asks UniformTypeIdentifiers, which Linux does not have, and so sends every file as
/// `application/octet-stream` there. Lupine uses this table on every platform so that a part's
/// `Content-Type` does not depend on where the program runs.
enum MultipartMIMEType {
    /// The type sent when an extension is not in the table.
    static let fallback = "application/octet-stream"

    /// The MIME type for a path extension, compared case-insensitively; `fallback` when unknown.
    static func mimeType(forPathExtension pathExtension: String) -> String {
        typesByExtension[pathExtension.lowercased()] ?? fallback
    }

    private static let typesByExtension: [String: String] = [
        // Text and structured data
        "txt": "text/plain",
        "text": "text/plain",
        "log": "text/plain",
        "md": "text/markdown",
        "markdown": "text/markdown",
        "html": "text/html",
        "htm": "text/html",
        "css": "text/css",
        "csv": "text/csv",
        "tsv": "text/tab-separated-values",
        "ics": "text/calendar",
        "vcf": "text/vcard",
        "rtf": "application/rtf",
        "js": "text/javascript",
        "mjs": "text/javascript",
        "json": "application/json",
        "geojson": "application/geo+json",
        "jsonld": "application/ld+json",
        "xml": "application/xml",
        "plist": "application/x-plist",
        "yaml": "application/yaml",
        "yml": "application/yaml",
        "toml": "application/toml",
        "wasm": "application/wasm",
        // Documents
        "pdf": "application/pdf",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation",
        "epub": "application/epub+zip",
        // Images
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "svg": "image/svg+xml",
        "bmp": "image/bmp",
        "ico": "image/vnd.microsoft.icon",
        "tif": "image/tiff",
        "tiff": "image/tiff",
        "heic": "image/heic",
        "heif": "image/heif",
        "avif": "image/avif",
        // Audio
        "mp3": "audio/mpeg",
        "wav": "audio/wav",
        "aac": "audio/aac",
        "m4a": "audio/mp4",
        "flac": "audio/flac",
        "ogg": "audio/ogg",
        "oga": "audio/ogg",
        "opus": "audio/opus",
        "mid": "audio/midi",
        "midi": "audio/midi",
        // Video
        "mp4": "video/mp4",
        "m4v": "video/mp4",
        "mov": "video/quicktime",
        "webm": "video/webm",
        "avi": "video/x-msvideo",
        "mkv": "video/x-matroska",
        "mpeg": "video/mpeg",
        "mpg": "video/mpeg",
        "ogv": "video/ogg",
        "3gp": "video/3gpp",
        // Archives and binaries
        "zip": "application/zip",
        "gz": "application/gzip",
        "tgz": "application/gzip",
        "tar": "application/x-tar",
        "bz2": "application/x-bzip2",
        "xz": "application/x-xz",
        "7z": "application/x-7z-compressed",
        "rar": "application/vnd.rar",
        "jar": "application/java-archive",
        "bin": "application/octet-stream",
        // Fonts
        "ttf": "font/ttf",
        "otf": "font/otf",
        "woff": "font/woff",
        "woff2": "font/woff2",
    ]
}
