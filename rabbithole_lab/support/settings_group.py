"""The base of every settings group: a group reads its fields from the environment and `.env`, each field named
by its environment variable, the environment winning over the file."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict


class SettingsError(ValueError):
    """A configuration value is invalid; the message names the variable."""


def env_field(name: str, default: Any, description: str, **constraints: Any) -> Any:
    return Field(
        default,
        validation_alias=AliasChoices(name, name.lower()),
        description=f"{description} (env {name})",
        **constraints,
    )


class SettingsGroup(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        # no populate_by_name: a field called "path" must never read the PATH variable
        case_sensitive=False,
        env_ignore_empty=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, dotenv_settings)
