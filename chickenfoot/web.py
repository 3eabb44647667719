"""``chickenfoot play --web``: play against agents in the browser.

A small server from the standard library (:mod:`http.server`), bound to 127.0.0.1, serves the
replay viewer's page (:mod:`cf_env.replay_page`) in live mode and plays the other seats:

* ``GET /`` the page; ``GET /state`` the game so far as the viewer's JSON (your seat's view: the
  other hands are blanks) with your legal moves; ``POST /move`` ``{"action": id}`` plays your move,
  then the agents' until it is your turn again or the game is over, and answers like ``/state``;
  ``GET /record`` the game record (:mod:`cf_env.replay`) for ``chickenfoot replay``.
* A move that is not legal, or a malformed request, gets a 400 answer whose ``error`` says why,
  and changes nothing.
"""

from __future__ import annotations

import html
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from agents.base import needs_history
from cf_env import Game, GameEncoder, RulesConfig, action_to_string
from cf_env.replay import FrameBuilder, describe_step, game_record, landing, opening_text
from cf_env.scene import play_pose
from chickenfoot.play import Table

__all__ = ["LiveGame", "serve"]


class LiveGame:
    """One game between a person at ``seat`` and agents (``specs`` for the other seats, in order;
    the last one fills the rest)."""

    def __init__(self, config: RulesConfig, specs: list[str], seat: int, seed: int | None = None) -> None:
        table = Table(config, seat, list(specs))
        self.config, self.seat, self.seed = config, seat, seed
        self.others, self.specs, self.lineup, self.labels = table.others, table.specs, table.lineup, table.labels
        self.bots = table.load_agents()
        self.wants_history = needs_history(self.bots)
        self.game = Game(config, seed=seed)
        self.encoder = GameEncoder(config)
        self.rng = np.random.default_rng(seed)
        self.frames = FrameBuilder(viewer=seat)
        self.frames.add(self.game, opening_text(self.game))
        self.lock = threading.Lock()
        self._advance()

    def _apply(self, action: int) -> None:
        self.frames.add(self.game, describe_step(self.game, action, self.labels, viewer=self.seat))

    def _advance(self) -> None:
        """The agents play until it is the person's turn or the game is over."""
        game = self.game
        while not game.is_over and game.current_player != self.seat:
            p = game.current_player
            observation = self.encoder.observe(game, history=self.wants_history)
            self._apply(int(self.bots[self.others.index(p)].act(observation, self.rng)))

    def legal(self) -> list[dict[str, Any]]:
        game = self.game
        if game.is_over or game.current_player != self.seat:
            return []
        moves = []
        for a in game.legal_actions():
            text = action_to_string(a, self.config.max_pip)
            move: dict[str, Any] = {"action": int(a)}
            if ">" in text:
                m, x = text.split(">")
                text = f"{m}-{x} {landing(game, a)}"
                pose = play_pose(game, a)
                move["slot"] = [round(pose.x, 2), round(pose.y, 2), round(pose.angle, 2)]
            move["text"] = text
            moves.append(move)
        return moves

    def state(self, error: str | None = None) -> dict[str, Any]:
        out = {"live": True, "players": self.lineup, "config": self.config.to_dict(), "seat": self.seat,
               "rounds": self.frames.rounds, "frames": self.frames.frames, "legal": self.legal()}
        if error:
            out["error"] = error
        return out

    def move(self, action: Any) -> tuple[int, dict[str, Any]]:
        """Play the person's move; (HTTP status, state)."""
        with self.lock:
            if isinstance(action, bool) or not isinstance(action, int):
                return 400, self.state(f"a move is {{\"action\": <int>}}, got {action!r}")
            if self.game.is_over:
                return 400, self.state("the game is over")
            legal = [m["action"] for m in self.legal()]
            if action not in legal:
                return 400, self.state(f"action {action} is not legal now; legal: {legal}")
            self._apply(action)
            self._advance()
            return 200, self.state()

    def record(self) -> dict[str, Any]:
        return game_record(self.game, self.lineup, source="chickenfoot play --web", seed=self.seed,
                           human_seat=self.seat)


def _page(live: LiveGame) -> str:
    from cf_env.replay_page import PAGE

    data = json.dumps({"live": True, "players": live.lineup, "config": live.config.to_dict(), "seat": live.seat,
                       "rounds": [], "frames": []}).replace("</", "<\\/")
    title = "Chicken Foot: you vs " + ", ".join(dict.fromkeys(live.specs))
    return PAGE.replace("__TITLE__", html.escape(title)).replace("__DATA__", data)


def make_server(live: LiveGame, port: int = 8000) -> ThreadingHTTPServer:
    """The server for ``live`` on 127.0.0.1:``port`` (0: any free port); call ``serve_forever``."""

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: str, kind: str) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path in ("/", "/index.html"):
                self._send(200, _page(live), "text/html; charset=utf-8")
            elif path == "/state":
                with live.lock:
                    self._send(200, json.dumps(live.state()), "application/json")
            elif path == "/record":
                with live.lock:
                    self._send(200, json.dumps(live.record()), "application/json")
            else:
                self._send(404, json.dumps({"error": f"no page {path}"}), "application/json")

        def do_POST(self) -> None:
            if self.path.split("?", 1)[0] != "/move":
                self._send(404, json.dumps({"error": f"no endpoint {self.path}"}), "application/json")
                return
            try:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(min(length, 10_000)) or b"{}")
                action = body.get("action") if isinstance(body, dict) else None
            except (ValueError, json.JSONDecodeError):
                action = None
            status, state = live.move(action)
            self._send(status, json.dumps(state), "application/json")

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the page is the interface
            pass

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def serve(live: LiveGame, port: int = 8000, open_browser: bool = True) -> None:
    """Serve ``live`` until Ctrl-C; prints the address (and opens it in a browser if asked)."""
    server = make_server(live, port)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"Play at {url}  (Ctrl-C stops the server)", flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
