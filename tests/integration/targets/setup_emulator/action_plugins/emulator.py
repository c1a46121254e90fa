# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test-only action: change the platform emulator through its control API (tests/emulator/README.md).

Runs on the controller, like the lookup of the same name that reads the control API. Each task does one thing:

    emulator: {reset: true}                      # back to the seeded world, an empty log, no faults
    emulator: {clear: requests}                  # or faults
    emulator: {faults: [{method: GET, path: "/user$", status: 503, times: 1}]}  # appended to the rules
    emulator: {seed: {teams: {count: 120, prefix: squad}}}
    emulator: {settings: {ready_delay: 60}}
    emulator: {advance_clock: 3300}              # seconds
    emulator: {ddl: {branch: dev, statements: ["CREATE TABLE t (id bigint PRIMARY KEY)"]}}  # database: app
    emulator: {database: {require_approval_for_deploy: true}}                               # database: app
    emulator: {approve_deletion: {database: shop}}  # another administrator: the pending deletion request deletes it
    emulator: {authorization_code: {}}           # the consent screen; default: the seeded application
    emulator: {access_token: {}}                 # a code exchanged at /oauth/token, as the seeded user
    emulator: {branch_change_elsewhere: {database: pgapp, branch: main, change: {replicas: 3}}}  # or cluster_size,
                                                 # resize; end_state: a change made elsewhere (the web console)
    emulator: {branch_capacity: {database: pgapp, branch: main}}   # what the branch has; with set: {...}, set it
    emulator: {bouncer_resize_elsewhere: {database: pgapp, branch: main, bouncer: pool, resize: {replicas_per_cell: 2}}}
                                                 # end_state: a bouncer resize asked elsewhere (the web console)
    emulator: {schema_recommendation_add: {table_name: orders, recommendation_type: new_index}}  # database: app;
                                                 # as the platform's analysis makes one (open unless state says)
    emulator: {schema_recommendation_dismissal: {number: 1}}  # the reason a dismissal gave, and who; database: app
    emulator: {audit_events: {count: 150, audit_action: team.updated, hours_ago: 48}}  # added to the audit log
    emulator: {api: {method: POST, url: "{{ backups_url }}", bodies: [{name: a}, {name: b}], status: 201,
                     authorization: "{{ authorization }}"}}  # the platform's API, one request per body, as
                                                 # ansible.builtin.uri in a loop would send them (json: the answers)

The result carries the control API's answer (or the token endpoint's) under `json`, as ansible.builtin.uri would,
and is never `changed`, so that a play recap counts the changes of the modules under test only.
The emulator's root URL is `url`, by default the variable planetscale_emulator_url.
"""

from __future__ import annotations

import json
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode

from ansible.module_utils.urls import open_url
from ansible.plugins.action import ActionBase

ACTIONS = ('reset', 'clear', 'faults', 'seed', 'settings', 'advance_clock', 'ddl', 'database', 'approve_deletion',
           'authorization_code', 'access_token', 'branch_change_elsewhere', 'branch_capacity',
           'bouncer_resize_elsewhere', 'schema_recommendation_add', 'schema_recommendation_dismissal', 'audit_events', 'api')
DATABASE = {'organization': {'type': 'str'}, 'database': {'type': 'str'}}
BRANCH = {'organization': {'type': 'str'}, 'database': {'type': 'str'}, 'branch': {'type': 'str', 'required': True}}

ARGUMENT_SPEC = {
    'url': {'type': 'str'},
    'reset': {'type': 'bool'},
    'clear': {'type': 'str', 'choices': ['requests', 'faults']},
    'faults': {'type': 'list', 'elements': 'dict'},
    'seed': {'type': 'dict'},
    'settings': {'type': 'dict'},
    'advance_clock': {'type': 'float'},
    'ddl': {'type': 'dict', 'options': {
        'organization': {'type': 'str'},
        'database': {'type': 'str'},
        'branch': {'type': 'str', 'required': True},
        'statements': {'type': 'list', 'elements': 'str', 'required': True},
    }},
    'database': {'type': 'dict', 'options': {
        'organization': {'type': 'str'},
        'database': {'type': 'str'},
        'require_approval_for_deploy': {'type': 'bool'},
    }},
    'approve_deletion': {'type': 'dict', 'options': {
        'organization': {'type': 'str'},
        'database': {'type': 'str', 'required': True},
    }},
    'authorization_code': {'type': 'dict'},
    'access_token': {'type': 'dict'},
    'branch_change_elsewhere': {'type': 'dict', 'options': dict(BRANCH, **{
        'change': {'type': 'dict'},
        'cluster_size': {'type': 'str'},
        'resize': {'type': 'dict'},
        'end_state': {'type': 'str', 'choices': ['canceled', 'completed']},
    })},
    'branch_capacity': {'type': 'dict', 'options': dict(BRANCH, set={'type': 'dict'})},
    'bouncer_resize_elsewhere': {'type': 'dict', 'options': dict(BRANCH, **{
        'bouncer': {'type': 'str', 'required': True},
        'resize': {'type': 'dict', 'required': True},
        'end_state': {'type': 'str', 'choices': ['canceled', 'completed']},
    })},
    'schema_recommendation_add': {'type': 'dict', 'options': dict(DATABASE, **dict(
        (key, {'type': 'str'}) for key in ('recommendation_type', 'table_name', 'ddl_statement', 'title', 'keyspace',
                                           'state')))},
    'schema_recommendation_dismissal': {'type': 'dict', 'options': dict(DATABASE, number={'type': 'int',
                                                                                          'required': True})},
    'audit_events': {'type': 'dict', 'options': {
        'organization': {'type': 'str'},
        'count': {'type': 'int', 'required': True},
        'audit_action': {'type': 'str', 'default': 'team.updated'},
        'hours_ago': {'type': 'float', 'default': 0},
    }},
    'api': {'type': 'dict', 'options': {
        'method': {'type': 'str', 'required': True},
        'url': {'type': 'str', 'required': True},
        'bodies': {'type': 'list', 'elements': 'raw', 'required': True},
        'status': {'type': 'int', 'required': True},
        'authorization': {'type': 'str', 'required': True, 'no_log': True},
    }},
}


def call(url, method='GET', body=None, form=None, headers=None, status=None):
    """Send one request and give the decoded JSON answer (None when there is none); raise on an HTTP error, or on
    another status than the one given."""
    headers = dict(headers or {})
    data = None
    if body is not None:
        data, headers['Content-Type'] = json.dumps(body), 'application/json'
    elif form is not None:
        data, headers['Content-Type'] = urlencode(form), 'application/x-www-form-urlencoded'
    try:
        with open_url(url, method=method, data=data, headers=headers, timeout=30) as response:
            text = response.read()
            if status is not None and response.status != status:
                raise RuntimeError('%s %s answered HTTP %s, not %s' % (method, url, response.status, status))
    except HTTPError as exc:
        detail = exc.read().decode('utf-8', 'replace')[:500]
        raise RuntimeError('%s %s answered HTTP %s: %s' % (method, url, exc.code, detail)) from None
    except URLError as exc:
        raise RuntimeError('%s %s failed: %s' % (method, url, exc.reason)) from None
    return json.loads(text) if text else None


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(
            argument_spec=ARGUMENT_SPEC,
            required_one_of=[ACTIONS],
            mutually_exclusive=[ACTIONS],
        )
        root = args['url'] or (task_vars or {}).get('planetscale_emulator_url')
        if not root:
            return dict(result, failed=True, msg='url is required when planetscale_emulator_url is not set.')
        if args['reset'] is False:
            return dict(result, failed=True, msg='reset can only be true; leave it out to do something else.')
        try:
            answer = self._act(root.rstrip('/'), args)
        except RuntimeError as exc:
            return dict(result, failed=True, msg=str(exc))
        result['changed'] = False  # plumbing: a play recap's changed count stays the modules' own
        if answer is not None:
            result['json'] = answer
        return result

    @staticmethod
    def _act(root, args):
        control = root + '/_emulator'
        if args['reset']:
            return call(control + '/reset', 'POST')
        if args['clear']:
            return call('%s/%s' % (control, args['clear']), 'DELETE')
        if args['faults'] is not None:
            return call(control + '/faults', 'POST', {'rules': args['faults']})
        if args['seed'] is not None:
            return call(control + '/seed', 'POST', args['seed'])
        if args['settings'] is not None:
            return call(control + '/settings', 'POST', args['settings'])
        if args['api'] is not None:
            options = args['api']
            headers = {'Authorization': options['authorization']}
            return [call(options['url'], options['method'], body, headers=headers, status=options['status'])
                    for body in options['bodies']]
        if args['advance_clock'] is not None:
            return call(control + '/clock', 'POST', {'advance_seconds': args['advance_clock']})
        world = call(control + '/world')
        if args['ddl'] is not None:
            options = args['ddl']
            path = '/'.join((options['organization'] or world['organization'], options['database'] or world['database'],
                             options['branch']))
            return call('%s/branches/%s/ddl' % (control, path), 'POST', {'statements': options['statements']})
        if args['database'] is not None:
            options = args['database']
            changes = dict((key, value) for key, value in options.items()
                           if key not in ('organization', 'database') and value is not None)
            return call('%s/databases/%s/%s' % (control, options['organization'] or world['organization'],
                                                options['database'] or world['database']), 'POST', changes)
        if args['approve_deletion'] is not None:
            options = args['approve_deletion']
            return call('%s/databases/%s/%s/deletion-approval' % (
                control, options['organization'] or world['organization'], options['database']), 'POST')
        if args['bouncer_resize_elsewhere'] is not None:
            options = args['bouncer_resize_elsewhere']
            body = dict((key, options[key]) for key in ('resize', 'end_state') if options[key] is not None)
            return call('%s/branches/%s/%s/%s/bouncers/%s/resizes' % (
                control, options['organization'] or world['organization'], options['database'] or world['database'],
                options['branch'], options['bouncer']), 'POST', body)
        if args['audit_events'] is not None:
            options = dict(args['audit_events'])
            organization = options.pop('organization') or world['organization']
            return call('%s/audit-log/%s' % (control, organization), 'POST', options)
        for action in ('branch_change_elsewhere', 'branch_capacity'):
            options = args[action]
            if options is None:
                continue
            path = '%s/branches/%s/%s/%s' % (control, options['organization'] or world['organization'],
                                             options['database'] or world['database'], options['branch'])
            if action == 'branch_capacity':
                return call(path + '/capacity', 'POST' if options['set'] else 'GET', options['set'])
            body = dict((key, value) for key, value in options.items()
                        if key not in BRANCH and value is not None)
            return call(path + '/changes', 'POST', body)
        for action in ('schema_recommendation_add', 'schema_recommendation_dismissal'):
            options = args[action]
            if options is None:
                continue
            path = '%s/schema-recommendations/%s/%s' % (control, options['organization'] or world['organization'],
                                                        options['database'] or world['database'])
            if action == 'schema_recommendation_dismissal':
                return call('%s/%s/dismissal' % (path, options['number']))
            return call(path, 'POST', dict((key, value) for key, value in options.items()
                                           if key not in DATABASE and value is not None))
        app = world['oauth_application']
        request = dict({'client_id': app['client_id'], 'redirect_uri': app['redirect_uri']},
                       **(args['authorization_code'] or args['access_token'] or {}))
        code = call(control + '/oauth/authorization-codes', 'POST', request)
        if args['authorization_code'] is not None:
            return code
        return call(root + '/oauth/token', 'POST', form={
            'grant_type': 'authorization_code',
            'code': code['code'],
            'redirect_uri': request['redirect_uri'],
            'client_id': app['client_id'],
            'client_secret': app['client_secret'],
        })
