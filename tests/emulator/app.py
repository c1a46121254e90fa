"""The application factory: resource API (/v1), OAuth server (/oauth), control API (/_emulator)."""

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from . import (api, api_access, api_audit, api_bouncers, api_capacity, api_databases, api_network, api_postgres,
               api_traffic_budgets, api_upkeep, control, oauth)
from .audit import AuditRecorder
from .records import ApiError, OAuthError, Settings
from .traffic import TrafficMiddleware

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
    app.include_router(api_databases.router)
    app.include_router(api_access.router)
    app.include_router(api_access.control)
    app.include_router(api_postgres.router)
    app.include_router(api_capacity.router)
    app.include_router(api_capacity.control)
    app.include_router(api_network.router)
    app.include_router(api_bouncers.router)
    app.include_router(api_bouncers.control)
    app.include_router(api_traffic_budgets.router)
    app.include_router(api_upkeep.router)
    app.include_router(api_upkeep.control)
    app.include_router(api_audit.router)
    app.include_router(api_audit.control)
    app.include_router(oauth.router)
    app.include_router(control.router)
    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(OAuthError, on_oauth_error)
    app.add_exception_handler(RequestValidationError, on_invalid)
    app.add_exception_handler(HTTPException, on_http_error)
    return app
