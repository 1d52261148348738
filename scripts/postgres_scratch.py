"""Throwaway databases on the PostgreSQL server that scripts/with-postgres
started (BFHPO_TEST_POSTGRES_URL, a superuser URL), for the Python tests and
benchmarks:

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from postgres_scratch import admin_url, fresh_database
    url = fresh_database("interop")   # an empty database, dropped when Python exits

Needs Debian's python3-psycopg2.
"""
import atexit
import os

import psycopg2


def admin_url():
    """The superuser URL, or None outside scripts/with-postgres."""
    return os.environ.get("BFHPO_TEST_POSTGRES_URL")


_created = []


def _drop_created():
    if not _created:
        return
    connection = psycopg2.connect(admin_url())
    connection.autocommit = True
    with connection.cursor() as cursor:
        for name in _created:
            cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    connection.close()


atexit.register(_drop_created)


def fresh_database(name):
    """The URL of a new empty database named after `name` and this process."""
    name = f"bfhpo_scratch_{os.getpid()}_{name}"
    _created.append(name)
    connection = psycopg2.connect(admin_url())
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        cursor.execute(f"CREATE DATABASE {name}")
    connection.close()
    return admin_url().rsplit("/", 1)[0] + "/" + name
