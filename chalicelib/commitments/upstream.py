"""Reading Keystone, Nova and Limes for one pass: one immutable Snapshot, or one UpstreamFailure.

keystoneauth1 does the identity work: password (project-scoped) or application-credential
auth, the catalog's public endpoints, Nova microversion headers, and retries of connection
errors and 5xx answers (`connect_retries`, `status_code_retries`). This module adds the
re-authentication on a 401 of every concurrent call (keystoneauth's retries only the first),
pagination (next links on the endpoint's origin only), each entry once, bounded fan-out over
projects, the Limes 404 rule and fail-closed error handling.

Secrets (password, application-credential secret, tokens) are never logged, never in a
repr and never in an exception: failures carry the service, what failed and the HTTP status.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import quote, urlencode, urljoin, urlsplit

import requests
from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import generic, v3
from pydantic import ValidationError
from requests.adapters import HTTPAdapter

from chalicelib.commitments.models import Commitment, Flavor, Project, Server, Snapshot
from chalicelib.commitments.rules import Untrusted, needs_servers, unique
from chalicelib.config import ConfigurationError, env_int

log = logging.getLogger(__name__)

NOVA_MICROVERSION = "2.61"  # extra_specs in flavor lists; flavor.original_name on servers needs >= 2.47
RETRIABLE_STATUS = (500, 502, 503, 504, 429)
ENV_PREFIX = "RP_OPENSTACK_"

T = TypeVar("T")
R = TypeVar("R")


class UpstreamFailure(Exception):
    """The pass cannot trust what it read: nothing may be written or released."""

    def __init__(self, service: str, what: str, status: int | None = None) -> None:
        self.service = service
        self.what = what
        self.status = status
        super().__init__(f"{service}: {what}" + (f" (HTTP {status})" if status is not None else ""))


class ConfigError(ConfigurationError):
    """OpenStack settings missing or unusable (the message names keys, never values); `missing`: the fields."""

    def __init__(self, message: str, missing: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.missing = missing


PASSWORD_FIELDS = ("username", "password", "project_name")
APPLICATION_CREDENTIAL = ("application_credential_id", "application_credential_secret")


def _missing_message(missing: tuple[str, ...], name: Callable[[str], str]) -> str:
    """Names only what is missing; the alternative to a password is said when that is what is missing."""
    listed = ", ".join(name(field) for field in missing)
    message = f"{listed} {'is' if len(missing) == 1 else 'are'} required"
    if any(field in PASSWORD_FIELDS for field in missing):
        message += f" (or {' and '.join(name(field) for field in APPLICATION_CREDENTIAL)} instead of a password)"
    return message


@dataclass(frozen=True)
class OpenStackConfig:
    auth_url: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    user_domain_name: str = "Default"
    project_name: str | None = None
    project_domain_name: str = "Default"
    application_credential_id: str | None = None
    application_credential_secret: str | None = field(default=None, repr=False)
    concurrency: int = 16
    retries: int = 3
    retry_delay: float | None = None  # None: keystoneauth's backoff (0.5 s, doubling); tests set a small fixed one
    timeout: float = 30.0

    def __post_init__(self) -> None:
        missing = self.missing_fields()
        if missing:
            raise ConfigError(_missing_message(missing, str), missing)
        if self.concurrency < 1:
            raise ConfigError("concurrency must be at least 1")

    def missing_fields(self) -> tuple[str, ...]:
        needed = ("application_credential_secret",) if self.uses_application_credential else PASSWORD_FIELDS
        return tuple(f for f in ("auth_url", *needed) if not getattr(self, f))

    @property
    def uses_application_credential(self) -> bool:
        return bool(self.application_credential_id)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], **overrides: Any) -> OpenStackConfig:
        """From a mapping keyed like the secret: auth_url, username, ..., application_credential_secret."""
        keys = ("auth_url", "username", "password", "user_domain_name", "project_name", "project_domain_name",
                "application_credential_id", "application_credential_secret")
        picked: dict[str, Any] = {k: values[k] for k in keys if values.get(k) not in (None, "")}
        return cls(**{"auth_url": "", **picked, **overrides})

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OpenStackConfig:
        env = os.environ if env is None else env
        values = {key[len(ENV_PREFIX):].lower(): value for key, value in env.items() if key.startswith(ENV_PREFIX)}
        try:
            return cls.from_mapping(values, **concurrency_override(env))
        except ConfigError as exc:
            if not exc.missing:
                raise
            # The variables a person sets, not the secret's keys.
            message = _missing_message(exc.missing, lambda field: ENV_PREFIX + field.upper())
            raise ConfigError(message, exc.missing) from None


def concurrency_override(env: Mapping[str, str]) -> dict[str, Any]:
    """RP_COMMITMENTS_CONCURRENCY as an override of the settings' concurrency ({} when unset); a value that is
    no whole number of at least 1 is a ConfigurationError naming the variable, never its value."""
    if not env.get("RP_COMMITMENTS_CONCURRENCY"):
        return {}
    return {"concurrency": env_int(env, "RP_COMMITMENTS_CONCURRENCY", 0, minimum=1)}


def secrets_manager_client() -> Any:
    """The Secrets Manager client of the process's region and credentials (Lambda's role in AWS)."""
    import boto3  # here, not in the service: the AWS SDK stays in adapters (pyproject's import contracts)

    return boto3.client("secretsmanager")


def config_from_secret(secrets_client: Any, secret_arn: str, **overrides: Any) -> OpenStackConfig:
    """Read the OpenStack settings from a Secrets Manager secret (a JSON object keyed as from_mapping says)."""
    try:
        raw = secrets_client.get_secret_value(SecretId=secret_arn)["SecretString"]
        values = json.loads(raw)
    except (KeyError, ValueError):
        # from None: a JSON error keeps the whole document (the secret) in its attributes.
        raise ConfigError("the OpenStack secret is not a JSON object") from None
    if not isinstance(values, dict):
        raise ConfigError("the OpenStack secret is not a JSON object")
    return OpenStackConfig.from_mapping(values, **overrides)


class OpenStackClient:
    """One keystoneauth Session (token cached, re-auth on 401) shared by a bounded pool of threads."""

    def __init__(self, config: OpenStackConfig, clock: Callable[[], float] = time.time) -> None:
        self._config = config
        self._clock = clock
        http = requests.Session()
        # Enough pooled connections for every worker, so keep-alive connections are reused, not churned.
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=config.concurrency + 4)
        http.mount("http://", adapter)
        http.mount("https://", adapter)
        self._session = ks_session.Session(auth=_auth_plugin(config), session=http, timeout=config.timeout,
                                           connect_retries=config.retries)
        self.calls = 0
        self._calls_lock = threading.Lock()
        self._auth_lock = threading.Lock()  # one renewal of a refused token at a time (see _renewed_token)

    def __repr__(self) -> str:
        return f"OpenStackClient(auth_url={self._config.auth_url!r})"

    # --- the pass -----------------------------------------------------------------------------------

    def fetch(self) -> Snapshot:
        started = self._clock()
        projects = self.list_projects()
        flavors = self.list_flavors()
        answers = self._fan_out(projects, self.list_commitments)
        commitments: dict[str, tuple[Commitment, ...]] = {}
        unparsed: dict[str, tuple[str | None, ...]] = {}
        not_found: set[str] = set()
        for project, (listed, bad) in zip(projects, answers, strict=True):
            if listed is None:
                not_found.add(project.id)
                listed = ()
            commitments[project.id] = listed
            if bad:
                unparsed[project.id] = bad
        with_instances = [p for p in projects if needs_servers(commitments[p.id])]
        servers = dict(zip((p.id for p in with_instances),
                           self._fan_out(with_instances, self.list_servers), strict=True))
        log.info("fetched upstream", extra={
            "projects": len(projects), "flavors": len(flavors), "limesNotFound": len(not_found),
            "commitments": sum(len(v) for v in commitments.values()), "serverProjects": len(servers),
            "calls": self.calls})
        return Snapshot(
            fetched_at=started, projects=tuple(projects), flavors=MappingProxyType(flavors),
            commitments=MappingProxyType(commitments), servers=MappingProxyType(servers),
            limes_not_found=frozenset(not_found), unparsed=MappingProxyType(unparsed),
        )

    def _fan_out(self, projects: Sequence[Project], call: Callable[[Project], R]) -> list[R]:
        """`call` for every project on at most `concurrency` threads; the first failure cancels the rest."""
        if not projects:
            return []
        with ThreadPoolExecutor(max_workers=min(self._config.concurrency, len(projects)),
                                thread_name_prefix="openstack") as pool:
            futures: list[Future[R]] = [pool.submit(call, p) for p in projects]
            _, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for future in pending:
                future.cancel()
            for future in futures:
                if future.done() and not future.cancelled() and future.exception() is not None:
                    raise future.exception()  # type: ignore[misc]
            return [f.result() for f in futures]

    # --- the four listings --------------------------------------------------------------------------

    def _pages(self, service: str, first: str, next_of: Callable[[dict[str, Any]], str | None],
               microversion: str | None = None) -> Iterator[dict[str, Any]]:
        """Every page, following next links; a link seen before is a loop, not an endless fetch.

        A next link is followed only on the catalog endpoint's scheme, host and port: the token goes with
        every call, so a link elsewhere (another host, another port, http for https) fails the pass closed.
        """
        endpoint = self._endpoint(service)
        seen: set[str] = set()
        url: str | None = first
        page_url = urljoin(endpoint.rstrip("/") + "/", first)
        while url:
            if url in seen:
                raise UpstreamFailure(service, "pagination loop")
            seen.add(url)
            body = self._get(service, url, microversion=microversion)
            assert body is not None
            yield body
            link = next_of(body)
            if link is None:
                return
            page_url = urljoin(page_url, link)
            if _origin(page_url) != _origin(endpoint):
                raise UpstreamFailure(service, "next link to another host")
            url = page_url

    def list_projects(self) -> list[Project]:
        """Every project once (Keystone's paging over a changing list can repeat one)."""
        projects: list[Project] = []
        for body in self._pages("identity", "projects", lambda b: (b.get("links") or {}).get("next")):
            projects.extend(_parse(Project, body, "projects", "identity"))
        return list(_unique("identity", projects, lambda p: p.id, "project"))

    def list_flavors(self) -> dict[str, Flavor]:
        flavors: dict[str, Flavor] = {}
        first = "flavors/detail?" + urlencode({"is_public": "None"})  # None: public and private
        for body in self._pages("compute", first, lambda b: _next_link(b.get("flavors_links")), NOVA_MICROVERSION):
            for flavor in _parse(Flavor, body, "flavors", "compute"):
                flavors[flavor.name] = flavor  # Nova keeps names unique; were they not, the last would win
        return flavors

    def list_commitments(self, project: Project) -> tuple[tuple[Commitment, ...] | None, tuple[str | None, ...]]:
        """The project's compute commitments (each once; None when Limes answers 404) and the UUID of each
        listed one that did not parse (None where not even that could be read): listed all the same."""
        path = (f"v1/domains/{quote(project.domain_id, safe='')}/projects/{quote(project.id, safe='')}"
                "/commitments?service=compute")
        body = self._get("resources", path, not_found_ok=True)
        if body is None:
            return None, ()
        items = body.get("commitments")
        if not isinstance(items, list):
            raise UpstreamFailure("resources", "answer without a commitments list")
        parsed: list[Commitment] = []
        unparsed: list[str | None] = []
        for item in items:
            try:
                parsed.append(Commitment.model_validate(item))
            except ValidationError:
                uuid = item.get("uuid") if isinstance(item, dict) else None
                unparsed.append(uuid if isinstance(uuid, str) and uuid else None)
        return _unique("resources", parsed, lambda c: c.uuid, "commitment"), _unparsed_once(unparsed)

    def list_servers(self, project: Project) -> tuple[Server, ...]:
        servers: list[Server] = []
        first = "servers/detail?" + urlencode({"all_tenants": "true", "tenant_id": project.id})
        for body in self._pages("compute", first, lambda b: _next_link(b.get("servers_links")), NOVA_MICROVERSION):
            items = body.get("servers")
            if not isinstance(items, list):
                raise UpstreamFailure("compute", "answer without a servers list")
            for item in items:
                flavor = item.get("flavor") if isinstance(item, dict) else None
                name = flavor.get("original_name") if isinstance(flavor, dict) else None
                if not name:  # microversion not honoured: matching would silently subtract nothing
                    raise UpstreamFailure("compute", "server without flavor.original_name")
                servers.append(_validate(Server, {**item, "flavor_name": name}, "compute"))
        return _unique("compute", servers, lambda v: v.id, "server")

    # --- one call -----------------------------------------------------------------------------------

    def _endpoint(self, service: str) -> str:
        """The catalog's public endpoint of the service (authenticating first if need be)."""
        endpoint = self._keystone(service, lambda: self._session.get_endpoint(service_type=service,
                                                                              interface="public"))
        if not endpoint:
            raise UpstreamFailure(service, "no public endpoint in the catalog")
        return str(endpoint)

    def _keystone(self, service: str, call: Callable[[], R]) -> R:
        """A keystoneauth call; its exceptions become an UpstreamFailure naming only the kind of failure."""
        try:
            return call()
        except ks_exceptions.ClientException as error:
            # The library's message can carry URLs and bodies; keep only what kind of failure it was.
            raise UpstreamFailure(service, type(error).__name__) from None

    def _renewed_token(self, refused: str) -> str | None:
        """A token other than `refused`. keystoneauth's own re-authentication retries only the first of
        concurrent 401s (its invalidate() answers False once the token is cleared, and the others' calls
        are not retried), so every call re-authenticates here: the first to see the token refused gets a
        new one, the others take that one."""
        with self._auth_lock:
            current = self._session.get_token()
            if current == refused:
                self._session.invalidate()
                current = self._session.get_token()
            return current

    def _get(self, service: str, url: str, microversion: str | None = None,
             not_found_ok: bool = False) -> dict[str, Any] | None:
        with self._calls_lock:
            self.calls += 1
        token = self._keystone(service, self._session.get_token)
        response = self._send(service, url, token, microversion)
        if response.status_code == 401:  # the token expired or was revoked: once more with a new one
            token = self._keystone(service, lambda: self._renewed_token(token or ""))
            response = self._send(service, url, token, microversion)
        if response.status_code == 404 and not_found_ok:
            return None
        if not 200 <= response.status_code < 300:
            raise UpstreamFailure(service, "unexpected answer", response.status_code)
        try:
            body = response.json()
        except ValueError:
            raise UpstreamFailure(service, "answer is not JSON", response.status_code) from None
        if not isinstance(body, dict):
            raise UpstreamFailure(service, "answer is not a JSON object", response.status_code)
        return body

    def _send(self, service: str, url: str, token: str | None, microversion: str | None) -> Any:
        """One GET with this token (keystoneauth's re-authentication off: _get renews), retried on connection
        errors and 429/5xx by keystoneauth, and on a connection cut mid-answer here."""
        retries = self._config.retries
        delay = self._config.retry_delay
        for attempt in range(retries + 1):
            try:
                return self._session.get(
                    url, endpoint_filter={"service_type": service, "interface": "public"},
                    authenticated=False, headers={"X-Auth-Token": token or ""},
                    microversion=microversion, microversion_service_type="compute" if microversion else None,
                    connect_retries=retries, status_code_retries=retries,
                    retriable_status_codes=list(RETRIABLE_STATUS),
                    connect_retry_delay=delay, status_code_retry_delay=delay, raise_exc=False,
                )
            except ks_exceptions.UnknownConnectionError:
                # A connection that ends mid-answer: keystoneauth does not retry it, so retry it here alike.
                if attempt == retries:
                    raise UpstreamFailure(service, "UnknownConnectionError") from None
                time.sleep(delay if delay is not None else 0.5 * 2**attempt)
            except ks_exceptions.ClientException as error:
                # The library's message can carry URLs and bodies; keep only what kind of failure it was.
                raise UpstreamFailure(service, type(error).__name__) from None
        raise AssertionError("unreachable")  # the loop returns or raises


def _auth_plugin(config: OpenStackConfig) -> Any:
    auth_url = config.auth_url.rstrip("/")
    names_v3 = auth_url.endswith("/v3")
    if config.uses_application_credential:
        # keystoneauth has no version-discovering application-credential plugin: v3 it is.
        return v3.ApplicationCredential(
            auth_url=auth_url if names_v3 else f"{auth_url}/v3",
            application_credential_id=config.application_credential_id,
            application_credential_secret=config.application_credential_secret or "")  # checked in __post_init__
    # An auth URL ending in /v3 is used as it is, with no discovery call (as gophercloud does): a Keystone
    # behind a path prefix (/identity/v3) that serves no version document works too.
    password = v3.Password if names_v3 else generic.Password
    return password(
        auth_url=auth_url if names_v3 else config.auth_url, username=config.username,
        password=config.password or "", user_domain_name=config.user_domain_name,  # checked in __post_init__
        project_name=config.project_name, project_domain_name=config.project_domain_name)


def _origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port (the scheme's default when none is given) of a URL."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: no origin of ours
        return (scheme, "", -1)
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


def _unparsed_once(uuids: Iterable[str | None]) -> tuple[str | None, ...]:
    """A UUID repeated among the unparsed entries counts once; each entry without one counts on its own."""
    seen: set[str] = set()
    kept: list[str | None] = []
    for uuid in uuids:
        if uuid is None or uuid not in seen:
            kept.append(uuid)
        if uuid is not None:
            seen.add(uuid)
    return tuple(kept)


def _unique(service: str, items: Iterable[T], key: Callable[[T], Any], what: str) -> tuple[T, ...]:
    """rules.unique, failing the fetch closed (UpstreamFailure) on entries that contradict each other."""
    try:
        return unique(items, key, what)
    except Untrusted as fault:
        raise UpstreamFailure(service, fault.what) from None


def _next_link(links: Any) -> str | None:
    for link in links or ():
        if isinstance(link, dict) and link.get("rel") == "next" and link.get("href"):
            return str(link["href"])
    return None


def _parse(model: type[T], body: dict[str, Any], key: str, service: str) -> Iterable[T]:
    items = body.get(key)
    if not isinstance(items, list):
        raise UpstreamFailure(service, f"answer without a {key} list")
    return [_validate(model, item, service) for item in items]


def _validate(model: Any, item: Any, service: str) -> Any:
    try:
        return model.model_validate(item)
    except ValidationError:
        raise UpstreamFailure(service, f"malformed {model.__name__.lower()}") from None


__all__ = ["ConfigError", "OpenStackClient", "OpenStackConfig", "UpstreamFailure", "concurrency_override",
           "config_from_secret", "secrets_manager_client"]
