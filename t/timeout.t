#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# A worker that does not answer never hangs the request: after the
# timeout the answer names it.  A second write while one waits is taken,
# not refused: the workers apply writes in order, the last one wins.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Socket::INET;
use Test::More;
use Time::HiRes qw(time);
use MallocTest qw(poll_until json_decode);

my $t = MallocTest->new(workers => 2, admin => 'write=on timeout=1s')
    ->start;

my @pids = $t->worker_pids;

# requests go only to worker 0: a connection queued for the stopped
# worker would hang, then run when it resumes
my @ports = $t->ports_to($pids[0], 4);
is(scalar @ports, 4, 'found local ports that reach worker 0');

kill 'STOP', $pids[1];

my $next = 0;

sub ask {
    my ($method, $path, $body) = @_;
    return $t->http_from($ports[$next++ % @ports], $method, $path, $body);
}

sub raw_to_live {
    my ($text) = @_;
    my $s = $t->connect_from($ports[$next++ % @ports]) or die "$!";
    print $s $text;
    return $s;
}

my $start = time;
my $r = ask('POST', '/malloc/prof_active', 'true');
my $took = time - $start;

is($r->{status}, 504, 'stopped worker: 504');
is($r->{json}{error}{code}, 'worker_timeout', 'error code');
like($r->{json}{error}{text}, qr/pid $pids[1]\b.*did not answer/,
     'error names the worker');
ok($took < 6, 'answered after the deadline, not hung');

my ($w0) = grep { $_->{pid} == $pids[0] } @{$r->{json}{workers}};
my ($w1) = grep { $_->{pid} == $pids[1] } @{$r->{json}{workers}};
ok($w0->{prof_active} && !$w0->{error}, 'live worker applied it');
is($w1->{error}{code}, 'worker_timeout', 'stopped worker listed with error');

# the command is over: the next is taken (and times out again)

$r = ask('POST', '/malloc/prof_dump', '"stopped.heap"');
is($r->{status}, 504, 'dump with a stopped worker');
ok(-f $t->dump_dir . "/stopped.$pids[0].heap", 'live worker dumped');

# a second write while one is pending: taken, applied in order

my $sock = raw_to_live("POST /malloc/prof_active HTTP/1.0\r\n"
                       . "Content-Length: 5\r\n\r\nfalse");
select undef, undef, undef, 0.2;
my $second = ask('POST', '/malloc/prof_active', 'true');
is($second->{status}, 504, 'concurrent write taken, not refused (504: '
   . 'the stopped worker)');
isnt($second->{json}{error}{code}, 'busy', 'no busy code');
($w0) = grep { $_->{pid} == $pids[0] } @{$second->{json}{workers}};
ok($w0->{prof_active}, 'the live worker applied the last write');
my $first = join '', <$sock>;
like($first, qr/^HTTP\/1\.1 504/, 'first write answered after its deadline');
ok(ask('GET', '/malloc/prof_active')->{json}{prof_active},
   'the last write wins');

# resumed: the worker catches up with the desired state

kill 'CONT', $pids[1];
$r = ask('POST', '/malloc/prof_active', 'true');
is($r->{status}, 200, 'resumed worker answers');
ok(!grep({ !$_->{prof_active} } @{$r->{json}{workers}}),
   'both workers profile');
ok(!-e $t->dump_dir . "/stopped.$pids[1].heap",
   'a stale dump command is not carried out late');

# the client goes away while waiting: no leak, no alert, next one works

kill 'STOP', $pids[1];
$sock = raw_to_live("POST /malloc/prof_active HTTP/1.0\r\n"
                    . "Content-Length: 4\r\n\r\ntrue");
select undef, undef, undef, 0.2;
close $sock;
select undef, undef, undef, 0.2;
kill 'CONT', $pids[1];
$r = poll_until(5, sub {
    my $x = ask('POST', '/malloc/prof_active', 'false');
    $x->{status} == 200 ? $x : undef;
});
ok($r, 'the next write after an abandoned one is answered');
like($t->log_text, qr/client prematurely closed connection/,
     'the abandoned request was ended at once');

# a profile that times out leaves no hidden dump, even when the stopped
# worker comes to its command later

kill 'STOP', $pids[1];
$r = ask('GET', '/malloc/pprof/heap.pb.gz');
is($r->{status}, 504, 'profile with a stopped worker: 504');
is($r->{json}{error}{code}, 'worker_timeout', 'profile: worker_timeout');
kill 'CONT', $pids[1];
is(ask('POST', '/malloc/prof_active', 'true')->{status}, 200,
   'the resumed worker is past the profile\'s command');
is(join(' ', map { s{.*/}{}r } glob($t->dump_dir . '/.profile-*')), '',
   'no hidden dump of the timed-out profile');

$t->no_alerts;
$t->stop;

# a dump that a worker finishes after its request gave up: the worker
# removes it (a heap of 60000 sampled stacks takes longer than 50 ms)

# /malloc/ waits up to a minute: its profile of 60000 stacks must answer on
# a loaded machine too
$t = MallocTest->new(workers => 2, admin => 'write=on timeout=60s',
                     log_level => 'debug',
                     server => 'location /quick/ { malloc_admin '
                               . 'timeout=50ms; }')->start;
@pids = $t->worker_pids;
my ($p1) = $t->ports_to($pids[1], 1);
is($t->post('/malloc/prof_reset', '{"lg_sample": 0, "force": true}')
   ->{status}, 200, 'late: sample everything');
is($t->post('/malloc/prof_active', 'true')->{status}, 200,
   'late: profiling on');
is($t->http_from($p1, 'GET', '/t/alloc?stacks=60000&size=64')->{status},
   200, 'late: worker 1 holds 60000 stacks');
is($t->post('/malloc/prof_active', 'false')->{status}, 200,
   'late: profiling off');

my $late = 0;
for (1 .. 3) {
    $r = $t->get('/quick/pprof/heap');
    $late++ if $r->{status} == 504;
}
ok($late, "late: profiles gave up on the slow worker ($late of 3)");
SKIP: {
    # nginx.org's packages and builds have no debug log
    skip 'nginx is built without --with-debug', 1
        unless `$MallocTest::NGINX -V 2>&1` =~ /--with-debug/;

    ok(poll_until(10, sub {
        $t->log_text
            =~ /malloc apply: ".*\/\.profile-[^"]*" removed, its request is gone/;
    }), 'late: the slow worker removed its dump once done');
}
ok(poll_until(10, sub { !glob($t->dump_dir . '/{.profile-,.malloc-}*') }),
   'late: no hidden dump left')
    or diag join ' ', glob($t->dump_dir . '/.*');
is($t->get('/malloc/pprof/heap')->{status}, 200,
   'late: a profile with a timeout it can meet works');

$t->no_alerts;
$t->stop;

done_testing;
