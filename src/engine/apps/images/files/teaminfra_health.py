# GET /health for trytond 6.0, which has no route that says it serves. Loaded as a WSGI
# middleware from /etc/trytond.conf ([wsgi middleware]): it answers 200 once trytond runs AND
# its database is reachable and initialised (ir_module exists), 503 otherwise, so "healthy"
# means a JSON-RPC login can work. Every other request goes to trytond unchanged.
import os

from trytond import backend


class Health:
    def __init__(self, app, database=None):
        self.app = app
        self.database = database or os.environ.get('TEAMINFRA_TRYTON_DATABASE', 'tryton')

    def __call__(self, environ, start_response):
        if (environ.get('PATH_INFO') != '/health'
                or environ.get('REQUEST_METHOD') not in ('GET', 'HEAD')):
            return self.app(environ, start_response)
        try:
            database = backend.Database(self.database).connect()
            connection = database.get_connection(readonly=True)
            try:
                cursor = connection.cursor()
                cursor.execute('SELECT 1 FROM ir_module LIMIT 1')
                cursor.fetchall()
            finally:
                database.put_connection(connection)
            status, body = '200 OK', b'ok\n'
        except Exception as error:
            # The class name only: a connection error's text can hold the database address.
            status = '503 Service Unavailable'
            body = ('not ready: %s\n' % type(error).__name__).encode()
        start_response(status, [
            ('Content-Type', 'text/plain; charset=utf-8'),
            ('Content-Length', str(len(body))),
            ('Cache-Control', 'no-store'),
        ])
        return [body]
