"""Upload jobs: one background task per ``POST /documents``, status per file."""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["FileStatus", "Job", "JobTable"]

FileState = Literal["pending", "ingested", "skipped", "replaced", "failed"]


class FileStatus(BaseModel):
    """One uploaded file of a job.

    ``replaced``: for ``status="replaced"``, the version it replaced (its source, who
    uploaded it when this service knows, and when it was ingested).
    """

    name: str
    status: FileState = "pending"
    doc_id: str | None = None
    error: str | None = None
    replaced: str | None = None


class Job(BaseModel):
    """An upload job: ``queued`` -> ``running`` -> ``done``; ``client`` sent it (the
    fingerprint of its API key, or its address)."""

    job_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    status: Literal["queued", "running", "done"] = "queued"
    created: float = Field(default_factory=time.time)
    client: str | None = None
    files: list[FileStatus]


class JobTable:
    """The most recent ``keep`` jobs, oldest dropped first (in memory, per process)."""

    def __init__(self, *, keep: int = 1000) -> None:
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._keep = keep

    def new(self, names: list[str], *, client: str | None = None) -> Job:
        """Register a job for these file names."""
        job = Job(files=[FileStatus(name=n) for n in names], client=client)
        self._jobs[job.job_id] = job
        while len(self._jobs) > self._keep:
            self._jobs.popitem(last=False)
        return job

    def get(self, job_id: str) -> Job | None:
        """The job, or ``None`` when unknown (or long gone)."""
        return self._jobs.get(job_id)
