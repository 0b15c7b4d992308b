import NIOCore

/// Fixed documents and simple request reflections: `/json`, `/xml`, `/html`, `/encoding/utf8`,
/// `/latin1`, `/headers`, `/ip` and `/user-agent`.
enum DocumentRoutes {
    static let slideshow: JSONValue = .object([
        "slideshow": .object([
            "author": .string("Yours Truly"),
            "date": .string("date of publication"),
            "title": .string("Sample Slide Show"),
            "slides": .array([
                .object(["title": .string("Wake up to WonderWidgets!"), "type": .string("all")]),
                .object([
                    "items": .array([
                        .string("Why <em>WonderWidgets</em> are great"),
                        .string("Who <em>buys</em> WonderWidgets"),
                    ]),
                    "title": .string("Overview"),
                    "type": .string("all"),
                ]),
            ]),
        ])
    ])

    static let xml = """
        <?xml version='1.0' encoding='us-ascii'?>
        <slideshow title="Sample Slide Show" date="Date of publication" author="Yours Truly">
            <slide type="all">
                <title>Wake up to WonderWidgets!</title>
            </slide>
            <slide type="all">
                <title>Overview</title>
                <item>Why <em>WonderWidgets</em> are great</item>
                <item>Who <em>buys</em> WonderWidgets</item>
            </slide>
        </slideshow>

        """

    static let html = """
        <!DOCTYPE html>
        <html>
          <head><title>Lupine test server</title></head>
          <body>
            <h1>Herman Melville - Moby-Dick</h1>
            <p>Availing himself of the mild, summer-cool weather that now reigned in these latitudes.</p>
          </body>
        </html>

        """

    static let utf8Text = """
        UTF-8 encoded sample: café, naïve, Straße, Ελληνικά, русский, 日本語, 한국어, emoji 🐺🌙
        Math: ∀x ∈ ℝ, x² ≥ 0 — “quotes” and ‘apostrophes’ …

        """

    static func json() -> ResponsePlan {
        .response(.json(slideshow))
    }

    static func xmlDocument() -> ResponsePlan {
        .response(.text(xml, contentType: "application/xml"))
    }

    static func htmlDocument() -> ResponsePlan {
        .response(.text(html, contentType: "text/html; charset=utf-8"))
    }

    static func utf8() -> ResponsePlan {
        .response(.text(utf8Text, contentType: "text/plain; charset=utf-8"))
    }

    /// "café" encoded as ISO-8859-1, where é is the single byte 0xE9.
    static func latin1() -> ResponsePlan {
        .response(
            TestResponse(
                headers: ["Content-Type": "text/plain; charset=iso-8859-1"],
                body: ByteBuffer(bytes: [0x63, 0x61, 0x66, 0xE9])
            )
        )
    }

    static func headers(_ request: TestRequest) -> ResponsePlan {
        .response(.json(.object(["headers": request.headersJSON])))
    }

    static func ip() -> ResponsePlan {
        .response(.json(.object(["origin": .string("127.0.0.1")])))
    }

    static func userAgent(_ request: TestRequest) -> ResponsePlan {
        let agent = request.header("user-agent").map(JSONValue.string) ?? .null
        return .response(.json(.object(["user-agent": agent])))
    }
}
