"""Settings: the process environment over `.env`, validated once, with messages that say what to fix."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from calld.core.plan import Timings
from calld.domain.ids import DEFAULT_REGION, region_problem
from calld.ops.net import loopback_host

UNIX_PATH_MAX = 107
MAX_INSTANCE = 64  # daemons per deployment: one per core, a few hosts' worth
DEFAULT_PORT = 8787
# CALLD_MAX_CALLS' default: set from the load figures in docs/performance.md ("Why the daemon takes at
# most 50 calls"), which name the run behind it; a new run that moves it changes this line and that section.
DEFAULT_MAX_CALLS = 50
INSTANCE_PORT_STEP = 10  # daemon N's default CALLD_BIND port: 8787, 8797, 8807, ... (its media: the next one)


def instance_port(instance: int | None) -> int:
    """Daemon N's default public port; the proxy config (calld.ops.proxy) uses the same numbers."""
    return DEFAULT_PORT + INSTANCE_PORT_STEP * ((instance or 1) - 1)  # sun_path is 108 bytes on Linux, its last a NUL


class SettingsError(ValueError):
    pass


def default_state_dir() -> Path:
    # systemd's StateDirectory= sets STATE_DIRECTORY; a developer's run uses ~/.local/state.
    if sd := os.environ.get("STATE_DIRECTORY"):
        return Path(sd.split(":")[0])
    return Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state")) / "calld"


SYSTEMD_RUN = Path("/run")  # where calld.socket and calld@.socket put the control sockets


def default_socket_path() -> Path:
    """Where calld-ctl finds the daemon: systemd's socket, the runtime dir, or a per-user temp dir."""
    if (SYSTEMD_RUN / "calld-ctl.sock").exists():
        return SYSTEMD_RUN / "calld-ctl.sock"
    if rd := os.environ.get("RUNTIME_DIRECTORY"):
        return Path(rd.split(":")[0]) / "ctl.sock"
    if xdg := os.environ.get("XDG_RUNTIME_DIR"):
        return Path(xdg) / "calld" / "ctl.sock"
    return Path(f"/tmp/calld-{os.getuid()}") / "ctl.sock"


def default_socket_paths() -> tuple[Path, ...]:
    """calld-ctl's sockets when CALLD_SOCKET is unset: calld.socket's, else every calld@N.socket's in
    the order of N (a host of several daemons needs no setting), else the one default path."""
    if not (SYSTEMD_RUN / "calld-ctl.sock").exists():
        numbered = [(int(m.group(1)), p) for p in SYSTEMD_RUN.glob("calld-*-ctl.sock")
                    if (m := re.fullmatch(r"calld-([0-9]+)-ctl\.sock", p.name))]
        if numbered:
            return tuple(p for _, p in sorted(numbered))
    return (default_socket_path(),)


def _path_given(v: object) -> object:
    # Path("") is the current directory: calld would make it private and fill it with its state.
    if isinstance(v, str) and not v.strip():
        raise ValueError("is empty: give a path (or leave the setting out for the default)")
    return v


def _socket_fits(v: Path) -> Path:
    # The kernel keeps a Unix socket's address in 108 bytes, its last a NUL.
    if (size := len(os.fsencode(v))) > UNIX_PATH_MAX:
        raise ValueError(f"is {size} bytes long; a Unix socket's path can be at most {UNIX_PATH_MAX}: "
                         "choose a shorter one, e.g. /run/calld/ctl.sock")
    return v


def _region(v: object) -> object:
    if isinstance(v, str):
        v = v.strip().upper()
        if (problem := region_problem(v)) is not None:
            raise ValueError(problem)
    return v


LEDGER_NAME = "calld.sqlite3"
SOCKET_SEPARATOR = ","  # calld-ctl's CALLD_SOCKET may list several daemons; a daemon listens on one


def _socket_list(v: object) -> tuple[Path, ...]:
    """CALLD_SOCKET for calld-ctl: one path or several, comma-separated, each checked as one is."""
    raw = [v] if isinstance(v, Path) else str(v).split(SOCKET_SEPARATOR) if isinstance(v, str) else list(v)  # type: ignore[call-overload]
    paths = []
    for part in raw:
        _path_given(str(part))
        path = _socket_fits(Path(str(part).strip()))
        if path in paths:
            raise ValueError(f"names {path} twice; list each daemon's socket once, separated by '{SOCKET_SEPARATOR}'")
        paths.append(path)
    return tuple(paths)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", frozen=True)

    calld_state_dir: Path = Field(default_factory=default_state_dir)
    calld_mode: Literal["stub", "live"] = "stub"
    calld_socket: Path = Field(default_factory=default_socket_path)
    calld_bind: str = f"127.0.0.1:{DEFAULT_PORT}"  # the public listener (webhooks, /health); a proxy or tunnel fronts it
    # Telnyx's media WebSockets, on a lean listener of their own: the proxy routes /telnyx/media/ here.
    # Empty: CALLD_BIND's host and the next port (port 0 stays 0: any free port).
    calld_media_bind: str = ""
    # The web view of calls (calld.ui): off unless set; a listener of its own, never the public one.
    # A bare PORT is 127.0.0.1:PORT. `calld-ctl ui` prints a link to it.
    calld_ui_bind: str = ""
    shutdown_drain_s: float = Field(30.0, ge=0, le=600)  # SIGTERM: how long calls get to hang up cleanly
    # New calls past this many at once are refused (503), not queued: each call's audio needs CPU in
    # real time on one core. The default comes from bench/load.py on a 2-core machine (DEFAULT_MAX_CALLS).
    calld_max_calls: int = Field(DEFAULT_MAX_CALLS, ge=1, le=1000)
    # A daemon per core (docs/scaling.md): daemon N hands Telnyx per-call URLs under /d/N/ on the public
    # origin, and the proxy routes that prefix to its ports. Unset: the one daemon, no prefix.
    calld_instance: int | None = None
    # With a shared ledger: past this many seconds without a renewal (renewed every third of it), a
    # daemon counts as dead, and another settles its unfinished calls (hangs each up once).
    calld_lease_s: float = Field(30.0, ge=1.0, le=600.0)
    # The ledger on a PostgreSQL server several daemons share: postgresql://USER:PASSWORD@HOST:PORT/DATABASE.
    # Empty: the SQLite file in the state directory (one daemon, nothing to install).
    calld_ledger_url: SecretStr = SecretStr("")
    # The key of users' stand-ins in redacted reports and published object keys (calld.ops.redaction):
    # 64 hex digits (32 bytes). Empty: on a shared ledger, the one kept in the ledger (made by the first
    # daemon); else redaction.key in the state directory. Give every daemon on one ledger the same.
    calld_redaction_key: SecretStr = SecretStr("")

    telnyx_api_key: SecretStr = SecretStr("")
    telnyx_api_base: str = "https://api.telnyx.com"
    telnyx_connection_id: str = ""
    telnyx_public_key: str = ""
    # L16 byte order on the media socket is unverified on a live call: auto decides from the first speech.
    telnyx_l16_byte_order: Literal["le", "be", "auto"] = "le"
    # Answering machine detection on every dial. premium (ML; tells a business from a residence and a
    # machine) by default; its result is advice only, so detect or disabled change nothing but cost.
    telnyx_amd_mode: Literal["premium", "detect", "disabled"] = "premium"

    openai_api_key: SecretStr = SecretStr("")
    openai_live_model: str = "gpt-live-1"
    openai_responses_model: str = "gpt-5.5"
    openai_responses_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] = "low"
    openai_live_voice: str = "marin"
    openai_live_url: str = "wss://api.openai.com/v1/live/sessions"
    # The alpha-era header (OpenAI-Alpha: quicksilver=v3); GA needs none. Its effect on GA: unknown.
    openai_live_extra_header: str = ""

    public_base_url: str = ""
    public_webhook_url: str = ""
    # Where Telnyx opens the media socket; empty: PUBLIC_BASE_URL's origin + /telnyx/media (one origin,
    # the proxy routing that prefix to CALLD_MEDIA_BIND). Set it where media is reached another way.
    public_media_url: str = ""
    # Live mode dials real numbers: it also needs this explicit opt-in.
    calld_live_opt_in: bool = False

    # Texting calld through Linq (iMessage, RCS, SMS; docs/linq.md). Live: both Linq values or neither
    # (no texting); stub mode fakes Linq. Unrecognized texts go to the text model (OpenAI Responses API).
    linq_api_key: SecretStr = SecretStr("")
    linq_api_base: str = "https://api.linqapp.com/api/partner"
    linq_webhook_secret: SecretStr = SecretStr("")  # the subscription's signing secret, whsec_...
    openai_api_base: str = "https://api.openai.com/v1"
    messaging_model_parse: bool = True
    messaging_calls_per_hour: int = Field(5, ge=1, le=100)  # calls one handle may ask for by text
    messaging_texts_per_hour: int = Field(30, ge=1, le=1000)  # past this, one notice, then silence
    messaging_unlinked_texts_per_hour: int = Field(3, ge=1, le=100)  # the same, for a handle linked to no user
    # Replies in an hour to every handle linked to no user, together (HELP, START, the one polite line):
    # forty strangers texting HELP get this many replies, not forty; 0 never answers a stranger.
    messaging_unlinked_replies_per_hour: int = Field(10, ge=0, le=1000)
    messaging_confirm_s: float = Field(600.0, gt=0, le=86400)  # how long a "Reply YES" stands
    messaging_typing_refresh_s: float = Field(60.0, gt=0, le=85)  # Linq shows the indicator ~85 s
    messaging_followup_s: float = Field(86400.0, gt=0, le=30 * 86400)  # a follow-up refers to a request this recent
    # -- policy (calld.policy): what calld refuses to do before anything is written or dialled --
    calld_call_window: str = "08:00-21:00"  # dial only inside this, in the target's local time
    calld_allow_non_nanp: bool = False  # numbers outside +1 (the NANP) are refused unless this is 1
    # A number typed without + ("555-555-0142") is read as dialled in this region (ISO 3166, libphonenumber).
    calld_region: str = DEFAULT_REGION
    calld_calls_per_number_per_day: int = Field(2, ge=1, le=1000)  # calls to one number in 24 h, all users
    calld_calls_per_number_at_once: int = Field(1, ge=1, le=1000)  # calls on the line with one number, all users
    calld_calls_per_user_per_hour: int = Field(10, ge=1, le=10000)  # calls one user places in an hour
    calld_booking_horizon_days: int = Field(60, ge=1, le=366)  # how far ahead --time and --at may lie

    pickup_hold_s: float = Field(5.0, gt=0, le=30)
    farewell_max_s: float = Field(8.0, gt=0, le=60)
    farewell_quiet_s: float = Field(1.0, gt=0, le=10)
    close_timeout_s: float = Field(10.0, ge=10, le=60)
    drain_timeout_s: float = Field(10.0, gt=0, le=60)
    trail_s: float = Field(0.4, ge=0, le=5)
    hangup_confirm_s: float = Field(5.0, gt=0, le=60)
    # A hangup Telnyx has not taken (5xx, no answer, an unknown 422) is sent again with the same command id,
    # and the call's status read, for this long; then the result says the line may still be up.
    hangup_retry_s: float = Field(30.0, gt=0, le=600)
    stall_s: float = Field(20.0, gt=0, le=300)
    max_call_s: float = Field(300.0, gt=0, le=3600)
    # The carrier accepted the dial: call.answered or the call's end (a media stream is not the answer) must come within RING_TIMEOUT_S
    # (the carrier stops ringing at 30 s and says so), and once answered, its media within MEDIA_START_S.
    ring_timeout_s: float = Field(45.0, gt=0, le=600)
    media_start_s: float = Field(5.0, gt=0, le=60)
    # GPT-Live must send session.started within LIVE_READY_S of session.start (else failed/model_unavailable,
    # the business is not kept on a silent line), and once started may send nothing at all for at most
    # LIVE_QUIET_S (else failed/model_lost): its output is a continuous stream, silence included.
    live_ready_s: float = 12.0
    live_quiet_s: float = 5.0
    # On hold ("let me check", "please hold", hold music): how long to wait instead of STALL_S.
    hold_max_s: float = Field(120.0, gt=0, le=1800)
    # Phone menus: presses in a row that reach no person and no answer before the call ends ivr_unnavigable.
    dtmf_max_presses: int = Field(6, ge=1, le=50)

    # -- publishing and retention (calld.publish) ------------------------------------------------
    # keep: local only. publish: upload, then delete the local audio. publish-and-delete: upload,
    # then delete the run directory (the ledger keeps the result and the object keys).
    artifacts_retention: Literal["keep", "publish", "publish-and-delete"] = "keep"
    publish_bucket: str = Field("", validate_default=True)
    publish_prefix: str = "calld"
    publish_endpoint_url: str = ""  # empty: AWS S3; R2 and MinIO name theirs
    publish_region: str = "us-east-1"  # R2: auto
    publish_access_key_id: str = ""  # empty: boto3's own chain (AWS_* variables, instance roles)
    publish_secret_access_key: SecretStr = SecretStr("")
    publish_redacted_only: bool = False  # publish call_report.redacted.json and nothing else
    publish_audio: bool = True  # 0: the audio is never uploaded
    publish_concurrency: int = Field(4, ge=1, le=32)  # runs uploaded at once: one stuck store holds one slot
    publish_retry_initial_s: float = Field(30.0, gt=0, le=3600)
    publish_retry_max_s: float = Field(3600.0, gt=0, le=86400)

    @field_validator("publish_prefix")
    @classmethod
    def _prefix_shape(cls, v: str) -> str:
        from calld.publish.keys import check_prefix

        return check_prefix(v)

    @field_validator("publish_bucket")
    @classmethod
    def _bucket_shape(cls, v: str, info: ValidationInfo) -> str:
        from calld.publish.keys import check_bucket_name

        retention = info.data.get("artifacts_retention", "keep")
        if retention != "keep" and not v:
            raise ValueError(f"ARTIFACTS_RETENTION={retention} publishes: set the bucket here (or set ARTIFACTS_RETENTION=keep)")
        return check_bucket_name(v) if v else v

    @field_validator("calld_bind", "calld_media_bind")
    @classmethod
    def _bind_shape(cls, v: str, info: ValidationInfo) -> str:
        if not v and info.field_name == "calld_media_bind":
            return v
        host, sep, port = v.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError("write it as HOST:PORT, e.g. 127.0.0.1:8787")
        if int(port) >= 65536:
            raise ValueError(f"port {port} is out of range: a port is 0 to 65535 (0: any free one), e.g. 127.0.0.1:8787")
        return v

    @field_validator("calld_ui_bind")
    @classmethod
    def _ui_bind_shape(cls, v: str) -> str:
        v = v.strip()
        if not v:
            return v
        if v.isdigit():
            v = f"127.0.0.1:{v}"
        host, sep, port = v.rpartition(":")
        if not sep or not host or not port.isdigit() or int(port) >= 65536:
            raise ValueError("write it as HOST:PORT or a port alone for loopback, e.g. 127.0.0.1:8790 or 8790")
        return v

    @field_validator("calld_state_dir", "calld_socket", mode="before")
    @classmethod
    def _path_given(cls, v: object, info: ValidationInfo) -> object:
        return _path_given(v)

    @field_validator("calld_socket")
    @classmethod
    def _socket_fits(cls, v: Path) -> Path:
        if SOCKET_SEPARATOR in str(v):
            raise ValueError(f"names several sockets ({v}); a daemon listens on one: give it its own "
                             "(a list is for calld-ctl, which tries each daemon in turn)")
        return _socket_fits(v)

    @field_validator("calld_ledger_url")
    @classmethod
    def _ledger_url(cls, v: SecretStr) -> SecretStr:
        return _ledger_url(v)

    @field_validator("calld_redaction_key")
    @classmethod
    def _redaction_key(cls, v: SecretStr) -> SecretStr:
        text = v.get_secret_value().strip()
        if text and (len(text) != 64 or any(c not in "0123456789abcdefABCDEF" for c in text)):
            raise ValueError("write it as 64 hex digits (32 random bytes), e.g. the output of: openssl rand -hex 32")
        return SecretStr(text.lower())

    @field_validator("calld_region", mode="before")
    @classmethod
    def _region(cls, v: object) -> object:
        return _region(v)

    @field_validator("calld_instance", mode="before")
    @classmethod
    def _instance_shape(cls, v: object) -> object:
        if v is None or (isinstance(v, str) and not v.strip()):
            return None  # CALLD_INSTANCE= (empty) is the one daemon, as unset is
        text = str(v).strip()
        if isinstance(v, bool) or not text.isdigit() or not 1 <= int(text) <= MAX_INSTANCE:
            raise ValueError(f"is {v!r}: give this daemon's number, 1 to {MAX_INSTANCE} (the N in /d/N/), "
                             "or leave it unset for a single daemon")
        return int(text)

    @field_validator("telnyx_api_base", "public_base_url", "public_webhook_url", "linq_api_base")
    @classmethod
    def _http_url_shape(cls, v: str, info: ValidationInfo) -> str:
        if not v and info.field_name in ("public_base_url", "public_webhook_url"):
            return v
        scheme, sep, rest = v.partition("://")
        if not sep or scheme not in ("http", "https") or not rest.split("/", 1)[0]:
            raise ValueError("write it as https://HOST[/PATH] (http:// only on loopback), e.g. https://calld.example.net")
        return v

    @field_validator("public_media_url")
    @classmethod
    def _media_url_shape(cls, v: str) -> str:
        if not v:
            return v
        scheme, sep, rest = v.partition("://")
        if not sep or scheme not in ("ws", "wss") or not rest.split("/", 1)[0]:
            raise ValueError("write it as wss://HOST/PATH (or ws:// on loopback), e.g. wss://calld.example.net/telnyx/media")
        return v.rstrip("/")

    @field_validator("calld_call_window")
    @classmethod
    def _window_shape(cls, v: str) -> str:
        from calld.policy.window import CallWindow

        CallWindow.parse(v)  # its ValueError says how to write it
        return v

    @field_validator("live_ready_s")
    @classmethod
    def _live_ready_shape(cls, v: float) -> float:
        if not 2 <= v <= 60:
            raise ValueError(f"is {v:g} s: give 2 to 60 seconds (a session starts in about 1 s; past this the business "
                             "sits on a silent line before the call ends failed/model_unavailable), e.g. 12")
        return v

    @field_validator("live_quiet_s")
    @classmethod
    def _live_quiet_shape(cls, v: float, info: ValidationInfo) -> float:
        if not 1 <= v <= 60:
            raise ValueError(f"is {v:g} s: give 1 to 60 seconds (GPT-Live sends an audio delta about every 100 ms "
                             "while a session is open, silence included), e.g. 5")
        stall = info.data.get("stall_s")
        if stall is not None and v >= stall:
            raise ValueError(f"is {v:g} s: make it shorter than STALL_S ({stall:g} s), or a GPT-Live session gone quiet "
                             "is read as a silent line instead of the model's failure")
        return v

    @field_validator("openai_live_extra_header")
    @classmethod
    def _header_shape(cls, v: str) -> str:
        if v and ":" not in v:
            raise ValueError("write it as 'Name: value', e.g. 'OpenAI-Alpha: quicksilver=v3'")
        return v

    @model_validator(mode="after")
    def _instance_ports(self) -> Settings:
        # Daemon N with no CALLD_BIND of its own takes its own ports (instance_port), so daemons on one
        # host need no per-daemon port setting and the proxy config can name them.
        if self.calld_instance is not None and "calld_bind" not in self.model_fields_set:
            object.__setattr__(self, "calld_bind", f"127.0.0.1:{instance_port(self.calld_instance)}")  # frozen: set once, here
        return self

    def timings(self) -> Timings:
        return Timings(
            pickup_hold_s=self.pickup_hold_s,
            farewell_max_s=self.farewell_max_s,
            farewell_quiet_s=self.farewell_quiet_s,
            close_timeout_s=self.close_timeout_s,
            drain_timeout_s=self.drain_timeout_s,
            trail_s=self.trail_s,
            hangup_confirm_s=self.hangup_confirm_s,
            hangup_retry_s=self.hangup_retry_s,
            stall_s=self.stall_s,
            max_call_s=self.max_call_s,
            ring_timeout_s=self.ring_timeout_s,
            media_start_s=self.media_start_s,
            live_ready_s=self.live_ready_s,
            live_quiet_s=self.live_quiet_s,
            hold_max_s=self.hold_max_s,
            dtmf_max_presses=self.dtmf_max_presses,
        )

    @property
    def media_bind(self) -> str:
        """CALLD_MEDIA_BIND, or CALLD_BIND's host and the next port (the one before, for 65535)."""
        if self.calld_media_bind:
            return self.calld_media_bind
        host, _, port = self.calld_bind.rpartition(":")
        n = int(port)
        return f"{host}:{0 if n == 0 else n + 1 if n < 65535 else n - 1}"

    def bind_origin(self, setting: str, flags: Mapping[str, str]) -> tuple[str, str]:
        """(what the operator typed that chose this listener's address, what to change to move it), for
        CALLD_BIND or CALLD_MEDIA_BIND; `flags`: the command-line option each setting came from."""
        bind_flag = flags.get("calld_bind")
        if setting == "CALLD_MEDIA_BIND":
            if self.calld_media_bind:
                return f"CALLD_MEDIA_BIND={self.calld_media_bind}", "CALLD_MEDIA_BIND"
            after = f"{bind_flag} {self.calld_bind}" if bind_flag else f"CALLD_BIND={self.calld_bind}"
            return f"{self.media_bind}: the port after {after}", f"{bind_flag or 'CALLD_BIND'}, or set CALLD_MEDIA_BIND"
        if bind_flag:
            return f"{bind_flag} {self.calld_bind}", bind_flag
        if self.calld_instance is not None and "calld_bind" not in self.model_fields_set:
            return f"{self.calld_bind}: CALLD_INSTANCE={self.calld_instance}'s default", "CALLD_BIND or CALLD_INSTANCE"
        return f"CALLD_BIND={self.calld_bind}", "CALLD_BIND"

    @property
    def artifacts_dir(self) -> Path:
        return self.calld_state_dir / "artifacts"

    @property
    def db_path(self) -> Path:
        return self.calld_state_dir / LEDGER_NAME

    @property
    def ledger_target(self) -> Path | str:
        """Where the ledger is: CALLD_LEDGER_URL (PostgreSQL), else the SQLite file in the state dir."""
        return self.calld_ledger_url.get_secret_value() or self.db_path

    @property
    def instance_name(self) -> str:
        """The name this daemon's rows carry in a shared ledger (its calls, claims, publications, lease):
        CALLD_INSTANCE, or '' for the one daemon of a host."""
        return str(self.calld_instance) if self.calld_instance is not None else ""

    def live_problems(self) -> list[str]:
        """Everything that stops live mode, each with what to set; empty when live can run."""
        problems = [
            f"{name} is not set"
            for name, value in (
                ("TELNYX_API_KEY", self.telnyx_api_key.get_secret_value()),
                ("TELNYX_CONNECTION_ID", self.telnyx_connection_id),
                ("TELNYX_PUBLIC_KEY", self.telnyx_public_key),
                ("OPENAI_API_KEY", self.openai_api_key.get_secret_value()),
                ("PUBLIC_BASE_URL", self.public_base_url),
                ("PUBLIC_WEBHOOK_URL", self.public_webhook_url),
            )
            if not value
        ]
        if self.public_base_url and self.public_webhook_url:
            base, hook = origin(self.public_base_url), origin(self.public_webhook_url)
            if base != hook:
                problems.append(
                    f"PUBLIC_BASE_URL ({base}) and PUBLIC_WEBHOOK_URL ({hook}) must share one origin: both must reach this daemon"
                )
        if self.public_media_url.startswith("ws://") and not loopback_host(urlsplit(self.public_media_url).hostname or ""):
            problems.append("PUBLIC_MEDIA_URL must be wss:// (TLS) off this machine: the call's audio crosses the internet")
        if not self.calld_live_opt_in:
            problems.append("CALLD_LIVE_OPT_IN is not 1: live mode dials real numbers and needs it said explicitly")
        return problems

    @property
    def instance_prefix(self) -> str:
        """'/d/N' for CALLD_INSTANCE=N, '' for a single daemon."""
        return "" if self.calld_instance is None else f"/d/{self.calld_instance}"

    def _on_instance(self, url: str, instance: int | None = None) -> str:
        # The prefix goes right after the origin, whatever path follows: the proxy strips /d/N and
        # hands the rest to daemon N unchanged, so the daemon serves the paths it always has.
        prefix = self.instance_prefix if instance is None else f"/d/{instance}"
        parts = urlsplit(url)
        return urlunsplit(parts._replace(path=prefix + parts.path))

    def webhook_url(self, instance: int | None = None) -> str:
        """Where Telnyx posts this daemon's calls' webhooks (or daemon `instance`'s): PUBLIC_WEBHOOK_URL
        under /d/N/ (empty: not set). Every daemon shares the public origin, so each can name another's."""
        return self._on_instance(self.public_webhook_url, instance) if self.public_webhook_url else ""

    def health_url(self) -> str:
        """This daemon's /health through the public side: PUBLIC_BASE_URL under /d/N/."""
        return self._on_instance(self.public_base_url.rstrip("/") + "/health")

    def media_url(self) -> str:
        """PUBLIC_MEDIA_URL, or wss://host/telnyx/media from PUBLIC_BASE_URL (https -> wss, http -> ws),
        under /d/N/."""
        if self.public_media_url:
            return self._on_instance(self.public_media_url)
        scheme, rest = self.public_base_url.rstrip("/").split("://", 1)
        return self._on_instance(f"{'wss' if scheme in ('https', 'wss') else 'ws'}://{rest}/telnyx/media")

    def media_health_url(self) -> str:
        """Where the media listener answers a plain GET through the public side (ws -> http, wss -> https)."""
        scheme, rest = self.media_url().split("://", 1)
        return f"{'https' if scheme == 'wss' else 'http'}://{rest}/health"

    def secrets(self) -> list[str]:
        """Values that must never appear in an artifact or a log line."""
        keys = (self.telnyx_api_key.get_secret_value(), self.openai_api_key.get_secret_value(),
                self.linq_api_key.get_secret_value(), self.linq_webhook_secret.get_secret_value(),
                self.publish_secret_access_key.get_secret_value(), ledger_password(self.calld_ledger_url),
                self.calld_redaction_key.get_secret_value())
        return [s for s in keys if s]


def _ledger_url(v: SecretStr) -> SecretStr:
    from calld.ledger.target import postgres_url_problem

    text = v.get_secret_value().strip()
    if text and (problem := postgres_url_problem(text)) is not None:
        raise ValueError(problem)
    return SecretStr(text)


def ledger_password(url: SecretStr) -> str:
    """The password in CALLD_LEDGER_URL, if any (a secret: never logged)."""
    from urllib.parse import parse_qsl

    parts = urlsplit(url.get_secret_value())
    return parts.password or dict(parse_qsl(parts.query)).get("password", "")


def origin(url: str) -> str:
    """scheme://host[:port] with http(s) and ws(s) folded together, so a tunnel's URLs compare equal."""
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    default = {"http": 80, "https": 443}.get(scheme)
    port = f":{parts.port}" if parts.port and parts.port != default else ""
    return f"{scheme}://{(parts.hostname or '').lower()}{port}"


class ClientSettings(BaseSettings):
    """The settings calld-ctl itself uses (where the daemon's socket and state are, how to read a number), read from the same
    environment and .env as the daemon's. Only these are validated: a bad value of a setting only the
    daemon reads (CALLD_MAX_CALLS=fifty) is the daemon's to refuse, not a reason for calld-ctl to stop."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)  # the env file: Settings' (load_client_settings)

    calld_state_dir: Path = Field(default_factory=default_state_dir)
    # One daemon's socket, or several separated by commas: calld-ctl asks the first, and places a call
    # with the next when a daemon is down or at capacity (calld.cli.ctl.on_daemons).
    calld_socket: Annotated[tuple[Path, ...], NoDecode] = Field(default_factory=default_socket_paths)
    calld_region: str = DEFAULT_REGION  # --to typed without + is read as dialled here, as the daemon reads it
    calld_ledger_url: SecretStr = SecretStr("")  # calld-ctl ledger check|backup on a PostgreSQL ledger

    @field_validator("calld_state_dir", mode="before")
    @classmethod
    def _path_given(cls, v: object, info: ValidationInfo) -> object:
        return _path_given(v)

    @field_validator("calld_socket", mode="before")
    @classmethod
    def _sockets(cls, v: object) -> tuple[Path, ...]:
        return _socket_list(v)

    @field_validator("calld_ledger_url")
    @classmethod
    def _ledger_url(cls, v: SecretStr) -> SecretStr:
        return _ledger_url(v)

    @field_validator("calld_region", mode="before")
    @classmethod
    def _region(cls, v: object) -> object:
        return _region(v)

    @property
    def db_path(self) -> Path:
        return self.calld_state_dir / LEDGER_NAME

    @property
    def ledger_target(self) -> Path | str:
        """Where the ledger is: CALLD_LEDGER_URL (PostgreSQL), else the SQLite file in the state dir."""
        return self.calld_ledger_url.get_secret_value() or self.db_path


_NOT_A = {"int_parsing": "is not a whole number", "int_from_float": "is not a whole number", "float_parsing": "is not a number",
          "bool_parsing": "is not true or false (1 or 0, true or false, yes or no, on or off)"}


def _said(error: Any) -> str:
    """One setting's problem, with the value given when it is a number or a switch (never a key's text)."""
    given = error.get("input")
    shown = isinstance(given, str | int | float) and len(str(given)) <= 20
    if shown and error["type"] in _NOT_A:
        return f"{given!r} {_NOT_A[error['type']]}"
    said = error["msg"].removeprefix("Value error, ")
    if shown and error["type"] in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return f"{said}, got {given}"
    return said


def _refused(exc: ValidationError, flags: dict[str, str]) -> SettingsError:
    def where(loc: tuple[object, ...]) -> str:
        field = ".".join(map(str, loc))
        return flags.get(field) or field.upper()
    lines = [f"  {where(e['loc'])}: {_said(e)}" for e in exc.errors()]
    source = "on the command line, in .env or the environment" if flags else "in .env or the environment"
    return SettingsError(f"calld's settings are not valid; fix these {source}:\n" + "\n".join(lines))


_ENV_NAME = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")


def env_file_problems(env_file: object) -> list[str]:
    """Lines of the env file(s) python-dotenv cannot parse, each with its file and line number (and the
    setting's name, never its value: it may be a key). python-dotenv skips such a line with a warning
    that names no file, and the setting on it is silently not set."""
    from dotenv.parser import parse_stream

    paths = [env_file] if isinstance(env_file, str | os.PathLike) else list(env_file or ())  # type: ignore[call-overload]
    problems = []
    for path in map(Path, paths):
        try:
            text = path.read_text(encoding=Settings.model_config.get("env_file_encoding") or "utf-8", errors="replace")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            continue  # no such file is no setting, as for pydantic-settings
        except OSError as exc:
            problems.append(f"{path.absolute()} cannot be read ({exc.strerror})")
            continue
        for binding in parse_stream(io.StringIO(text)):
            if binding.error:
                name = _ENV_NAME.match(binding.original.string)
                what = f"the line setting {name.group(1)}" if name else "the line"
                problems.append(f"{path.absolute()}, line {binding.original.line}: python-dotenv cannot parse {what}")
    return problems


def load_settings(*, flags: dict[str, str] | None = None, strict_env_file: bool = False, **overrides: object) -> Settings:
    """`flags`: the command-line option each override came from, so a problem names what was typed.
    `strict_env_file` (the daemon): a line of the env file python-dotenv cannot parse is refused."""
    env_file = overrides["_env_file"] if "_env_file" in overrides else Settings.model_config.get("env_file")
    if strict_env_file and (problems := env_file_problems(env_file)):
        it = "it" if len(problems) == 1 else "them"
        raise SettingsError("; ".join(problems) + f"; fix or remove {it} (python-dotenv would skip {it}, "
                            "and calld would run without the setting)")
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise _refused(exc, flags or {}) from None


def load_client_settings(*, flags: dict[str, str] | None = None, **overrides: object) -> ClientSettings:
    """The settings calld-ctl uses (ClientSettings), from the same environment and env file as the daemon's."""
    overrides.setdefault("_env_file", Settings.model_config.get("env_file"))
    try:
        return ClientSettings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise _refused(exc, flags or {}) from None

