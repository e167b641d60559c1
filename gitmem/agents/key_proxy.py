"""A key-adding reverse proxy on loopback: the agent CLI holds a placeholder, the runner holds the model's key.

Masking a key by its value can never list every encoding an agent may write it in (UTF-32, base32, an `xxd`
dump, a `.tar.gz`), so the agent must never hold it. For each provider whose key the config passes
(gitmem.agents.key_stand_in), the runner serves one `KeyProxy` route on 127.0.0.1 for the agent's lifetime:
the agent's environment gets a random per-cycle placeholder for the key and this endpoint as its base URL,
and each request that carries a placeholder in a credential slot (`x-api-key`, `Authorization: Bearer`,
`x-goog-api-key`, `?key=`) is sent on to the one upstream the runner chose, with the real key in its place.
A request with no placeholder is refused (401) before anything is sent: another process on the machine cannot
spend the key through the port, only one holding the cycle's placeholder, which ends with the cycle.

The box keeps the host's network (the agent CLI reaches its provider), so the port is reachable from inside it
as from outside. Bodies are streamed both ways, chunk by chunk, as they come (server-sent events reach the CLI
event by event); nothing is logged: neither key nor placeholder reaches an output.
"""
from __future__ import annotations

import base64
import hmac
import http.client
import io
import json
import select
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHUNK = 64 * 1024
LOOPBACK = "127.0.0.1"         # where every route listens: reachable from the box, which keeps the host's network
UPSTREAM_SECONDS = 600.0       # a streamed answer may pause this long between events
# Credential headers a placeholder may stand in; `authorization` carries it after "Bearer ".
KEY_HEADERS = ("x-api-key", "x-goog-api-key", "authorization")
KEY_QUERY = "key"              # Gemini's `?key=`
# Headers that describe one hop, not the message (RFC 9110 7.6.1), and `host`, which names the upstream.
HOP_HEADERS = frozenset(("connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                         "transfer-encoding", "upgrade", "host", "proxy-connection"))


class ProxyError(Exception):
    """The upstream URL cannot be served (not http or https, no host)."""


@dataclass(frozen=True)
class Upstream:
    """Where a route sends its requests: `scheme://host:port` and the base path every request path is put
    under (`/v1` for OpenAI's base URL)."""

    scheme: str
    host: str
    port: int
    base_path: str

    @classmethod
    def parse(cls, url: str) -> Upstream:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProxyError(f"the model endpoint {parts.scheme}://{parts.hostname or ''} is not an http(s) URL")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:             # `https://host:notaport`, a port past 65535
            raise ProxyError(f"the model endpoint {url!r} has no valid port") from None
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        return self.host if self.port == default else f"{self.host}:{self.port}"

    def connect(self) -> http.client.HTTPConnection:
        """A connection to the upstream: straight, or through the forward proxy the runner's environment names
        for its scheme (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; NO_PROXY honoured) as a CONNECT tunnel, TLS inside
        it end to end. On a network whose only way out is that proxy, the agent CLI cannot take it for the
        key: it talks to the runner on loopback, so the runner's side must."""
        via = _egress_proxy(self.scheme, self.host)
        kind = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        if via is None:
            return kind(self.host, self.port, timeout=UPSTREAM_SECONDS)
        connection = kind(via.hostname or "", via.port or 80, timeout=UPSTREAM_SECONDS)
        headers = {}
        if via.username is not None:
            pair = f"{urllib.parse.unquote(via.username)}:{urllib.parse.unquote(via.password or '')}"
            headers["Proxy-Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        connection.set_tunnel(self.host, self.port, headers=headers)
        return connection


def _egress_proxy(scheme: str, host: str) -> urllib.parse.SplitResult | None:
    """The forward proxy the runner's environment names for `scheme` requests to `host`, or None (none named,
    or NO_PROXY lists the host)."""
    proxies = urllib.request.getproxies_environment()
    if urllib.request.proxy_bypass(host):        # NO_PROXY (on macOS, the system settings too)
        return None
    named = proxies.get(scheme) or proxies.get("all")
    if not named:
        return None
    try:
        parts = urllib.parse.urlsplit(named if "://" in named else f"http://{named}")
        parts.port               # noqa: B018  (a port that is not a number raises here, not at connect)
    except ValueError:
        return None
    return parts if parts.hostname else None


class KeyProxy:
    """One route: placeholders (each standing for one real key) in, `upstream` out, on 127.0.0.1:port.
    `start()` serves it in a daemon thread; `close()` stops it and closes its port."""

    def __init__(self, upstream: str, keys: Mapping[str, str], slots: tuple[str, ...] = (*KEY_HEADERS, KEY_QUERY)
                 ) -> None:
        self.upstream = Upstream.parse(upstream)
        self._keys = dict(keys)                # placeholder -> the real key
        # Where this provider's API takes its key (header names, KEY_QUERY for `?key=`): the key is put nowhere
        # else, so a placeholder in a URL or header the upstream echoes or logs never becomes the key there.
        self.slots = frozenset(slots)
        self._server = _QuietServer((LOOPBACK, 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, name="gitmem-key-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self._server.server_address[1]}"

    def start(self) -> KeyProxy:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving: no new connection is taken, and a connection still open adds no key any more."""
        self._keys.clear()
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def real_key(self, offered: str) -> str | None:
        """The key `offered` stands for, when it is one of this route's placeholders (compared in constant
        time: a probe learns nothing from how long a refusal takes)."""
        found = None
        for placeholder, key in self._keys.items():
            if hmac.compare_digest(offered.encode("utf-8", "surrogateescape"), placeholder.encode()):
                found = key
        return found


class _QuietServer(ThreadingHTTPServer):
    """A request that breaks its handler is dropped without a word: the default prints the request's state
    (headers, a `?key=`) to the runner's stderr."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


def _handler(proxy: KeyProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(_ForwardingHandler):
        route = proxy
    return Handler


class _ForwardingHandler(BaseHTTPRequestHandler):
    route: KeyProxy
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: with Nagle's algorithm the second waits for the client's
    # delayed ACK (40 ms on Linux) on every request.
    disable_nagle_algorithm = True
    timeout = UPSTREAM_SECONDS       # an idle kept-alive client is dropped, its thread with it
    _upstream: http.client.HTTPConnection | None = None     # kept while the client keeps its connection

    def do_GET(self) -> None:
        self._forward()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        """Nothing is logged: a request line can carry `?key=`."""

    def finish(self) -> None:
        if self._upstream is not None:
            self._upstream.close()
        super().finish()

    def _forward(self) -> None:
        length = self.headers.get("content-length")
        if length is not None and not length.strip().isdigit():
            self.close_connection = True
            self._refuse(400, "the request's Content-Length is not a number")
            return
        if "upgrade" in (name.lower() for name in self.headers):
            # A WebSocket is not relayed, and sends nothing on: Codex, refused its upgrade (which carries no key)
            # with a 404, streams over plain HTTP instead; a 401 would stop it.
            self._refuse(404, "gitmem's key proxy does not relay protocol upgrades (WebSocket)")
            return
        headers, path = self._with_real_key()
        if headers is None:
            self._refuse(401, "this endpoint takes only the cycle's placeholder key (gitmem's key proxy)")
            return
        upstream = self.route.upstream
        try:
            response = self._send_upstream(upstream, path, headers)
        except (OSError, ValueError, http.client.HTTPException) as err:    # ValueError: a malformed header
            self._drop_upstream()
            self._refuse(502, f"gitmem's key proxy cannot reach {upstream.host_header}: {type(err).__name__}")
            return
        self._relay(response)

    def _with_real_key(self) -> tuple[list[tuple[str, str]] | None, str]:
        """The request's headers and path with each placeholder replaced by its key; (None, _) when no
        credential slot holds a placeholder."""
        replaced = False
        headers: list[tuple[str, str]] = []
        for name, value in self.headers.items():
            lower = name.lower()
            if lower in HOP_HEADERS:
                continue
            if lower in KEY_HEADERS and lower in self.route.slots:
                scheme, _, token = value.partition(" ") if lower == "authorization" else ("", "", value)
                key = self.route.real_key(token.strip())
                if key is not None:
                    value, replaced = (f"{scheme} {key}" if scheme else key), True
            headers.append((name, value))
        target = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qsl(target.query, keep_blank_values=True)
        for index, (name, value) in enumerate(query):
            key = self.route.real_key(value) if name == KEY_QUERY and KEY_QUERY in self.route.slots else None
            if key is not None:
                query[index], replaced = (name, key), True
        path = self.route.upstream.base_path + (target.path or "/")
        if query:
            path += "?" + urllib.parse.urlencode(query)
        return (headers if replaced else None), path

    def _send_upstream(self, upstream: Upstream, path: str,
                       headers: list[tuple[str, str]]) -> http.client.HTTPResponse:
        """Send the request on, its body streamed as it arrives; the upstream's response, headers read."""
        if self._upstream is not None and self._upstream.sock is not None and \
                select.select([self._upstream.sock], [], [], 0)[0]:
            self._drop_upstream()      # between answers a kept connection has nothing to read unless it was closed
        if self._upstream is None:
            self._upstream = upstream.connect()
        connection = self._upstream
        connection.putrequest(self.command, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", upstream.host_header)
        for name, value in headers:
            if name.lower() != "content-length":
                connection.putheader(name, value)
        length = self.headers.get("content-length")
        chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        if chunked:
            connection.putheader("Transfer-Encoding", "chunked")
        elif length is not None:
            connection.putheader("Content-Length", str(int(length)))
        connection.endheaders()
        if chunked:
            for piece in _chunks_in(self.rfile):
                connection.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            connection.send(b"0\r\n\r\n")
        elif length is not None:
            left = int(length)
            while left > 0:
                piece = self.rfile.read(min(CHUNK, left))
                if not piece:
                    break
                connection.send(piece)
                left -= len(piece)
        return connection.getresponse()

    def _relay(self, response: http.client.HTTPResponse) -> None:
        """The upstream's answer to the client as it comes: a length it gave is kept, else chunked."""
        self.send_response_only(response.status, response.reason)
        length = response.getheader("content-length")
        for name, value in response.getheaders():
            if name.lower() not in HOP_HEADERS and name.lower() != "content-length":
                self.send_header(name, value)
        bodiless = self.command == "HEAD" or response.status in (204, 304) or 100 <= response.status < 200
        chunked = length is None and not bodiless
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif length is not None:
            self.send_header("Content-Length", length)
        if response.will_close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.flush()
        try:
            while not bodiless:
                piece = response.read1(CHUNK)
                if not piece:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                self.wfile.flush()
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (OSError, http.client.HTTPException):
            self.close_connection = True
        finally:
            response.close()
            if response.will_close or self.close_connection:
                self._drop_upstream()

    def _refuse(self, status: int, message: str) -> None:
        body = json.dumps({"type": "error", "error": {"type": "gitmem_key_proxy", "message": message}}).encode()
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self._drain()

    def _drain(self) -> None:
        """Read a refused request's body, so the connection can carry the client's next request; one it does
        not say the length of closes the connection instead."""
        length = self.headers.get("content-length")
        if self.close_connection or length is None or "chunked" in self.headers.get("transfer-encoding",
                                                                                       "").lower():
            self.close_connection = True
            return
        left = int(length)
        while left > 0:
            piece = self.rfile.read(min(CHUNK, left))
            if not piece:
                break
            left -= len(piece)

    def _drop_upstream(self) -> None:
        if self._upstream is not None:
            self._upstream.close()
            self._upstream = None


def _chunks_in(stream: io.BufferedIOBase) -> Iterator[bytes]:
    """The pieces of a chunked request body, as they arrive, CHUNK bytes at most each: the agent writes the
    request, and a chunk that claims gigabytes is not held in the runner's memory."""
    while True:
        size = int(stream.readline().split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while stream.readline() not in (b"\r\n", b"\n", b""):      # trailers
                pass
            return
        while size > 0:
            piece = stream.read(min(CHUNK, size))
            if not piece:              # the client went away mid-chunk: no end is sent for it upstream
                raise ConnectionError("the request's body ended inside a chunk")
            size -= len(piece)
            yield piece
        stream.readline()
