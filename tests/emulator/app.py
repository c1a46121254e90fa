"""The application factory: resource API (/v1), OAuth server (/oauth), control API (/_emulator), each a router of
routes/, over the world of world/ (its state and rules), in the traffic layer (routes/traffic.py)."""

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from .routes import (access, api, audit, bouncers, capacity, control, databases, keyspaces, metrics, network,
                     oauth, postgres, traffic_budgets, upkeep, workflows)
from .routes import billing
from .routes import insights
from .routes.traffic import TrafficMiddleware
from .world.audit import AuditRecorder
from .world.records import ApiError, OAuthError, Settings

HTTP_CODES = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed"}
LOCATIONS = {"body", "query", "path", "header"}


class EmulatorApp(FastAPI):
    def build_middleware_stack(self):
        # outermost, so the traffic layer receives the server's own send callable
        # the audit log's recorder inside it: a write committed before a fault replaced its answer is recorded
        return TrafficMiddleware(AuditRecorder(super().build_middleware_stack(), self), self)


def error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status)


def describe_validation(errors) -> str:
    parts = []
    for item in errors:
        if item["type"] == "json_invalid":
            return "The request body is not valid JSON"
        loc = item["loc"][1:] if item["loc"] and item["loc"][0] in LOCATIONS else item["loc"]
        location = ".".join(str(part) for part in loc)
        message = item["msg"].removeprefix("Value error, ")
        parts.append(f"{location}: {message}" if location else message)
    return "; ".join(parts) or "Invalid parameters"


async def on_api_error(request: Request, exc: ApiError) -> JSONResponse:
    return JSONResponse(exc.body(), exc.status)


async def on_oauth_error(request: Request, exc: OAuthError) -> JSONResponse:
    return oauth.oauth_error_response(exc)


async def on_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    return error(422, "invalid_params", describe_validation(exc.errors()))


async def on_http_error(request: Request, exc: HTTPException) -> JSONResponse:
    code = HTTP_CODES.get(exc.status_code, "bad_request")
    return error(exc.status_code, code, exc.detail if isinstance(exc.detail, str) else code)


def create_app(settings: Settings | None = None) -> FastAPI:
    app = EmulatorApp(title="Platform API emulator", openapi_url=None, docs_url=None, redoc_url=None)
    app.state.initial_settings = settings or Settings()
    control.reset(app)
    app.include_router(api.router)
    app.include_router(databases.router)
    app.include_router(access.router)
    app.include_router(access.control)
    app.include_router(postgres.router)
    app.include_router(capacity.router)
    app.include_router(capacity.control)
    app.include_router(keyspaces.router)
    app.include_router(keyspaces.control)
    app.include_router(workflows.router)
    app.include_router(metrics.router)
    app.include_router(network.router)
    app.include_router(bouncers.router)
    app.include_router(bouncers.control)
    app.include_router(traffic_budgets.router)
    app.include_router(insights.router)
    app.include_router(upkeep.router)
    app.include_router(upkeep.control)
    app.include_router(audit.router)
    app.include_router(audit.control)
    app.include_router(billing.router)
    app.include_router(oauth.router)
    app.include_router(control.router)
    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(OAuthError, on_oauth_error)
    app.add_exception_handler(RequestValidationError, on_invalid)
    app.add_exception_handler(HTTPException, on_http_error)
    return app
