#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Clients that go away (issue 20, defect 4): hundreds of
# stats?detail=full and profile requests on a read-only location, each
# closed right after it is sent, leave no hidden file behind (they would
# count against max_size until prof_dump is refused with dump_dir_full),
# and the operator's prof_dump works afterwards.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(sleep);
use MallocTest qw(poll_until);

my $t = MallocTest->new(workers => 2,
    server => 'location /ro/ { malloc_admin; }')->start;
my $dir = $t->dump_dir;

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');

sub hidden {
    opendir(my $d, $dir) or return ();
    return grep { /^\.[^.]/ } readdir $d;
}

# the requests of $path that nginx logged: it logs a request once its
# cleanups ran, whether its client was there to the end or not
sub logged {
    my ($path) = @_;
    return scalar(() = $t->log_text('access.log') =~ /"GET \Q$path\E /g);
}

for my $path ('/ro/stats?detail=full', '/ro/pprof/heap.pb.gz') {
    my $sent = 0;
    for my $i (1 .. 300) {
        my $s = $t->send('GET', $path) or next;
        $sent++;
        # a few go away at once, the others a moment later
        sleep 0.002 if $i % 3;
        close $s;
    }

    # a loaded machine reads the last ones seconds later: all of them
    # ended first, so that "no hidden file" is not a moment between two
    ok(poll_until(60, sub { logged($path) >= $sent }),
       "$path: the $sent aborted requests all ended")
        or diag logged($path) . ' logged';
    ok(poll_until(10, sub { !hidden() }),
       "$path: $sent aborted requests leave no hidden file")
        or diag scalar(hidden()) . ' left: ' . join ' ', (hidden())[0 .. 4];
}

is($t->get('/ro/stats?detail=full')->{status}, 200,
   'stats?detail=full after them');
my $r = $t->post('/malloc/prof_dump', '"after-%p.heap"');
is($r->{status}, 200, 'prof_dump after them') or diag explain $r->{json};
is(scalar(() = glob("$dir/after-*.heap")), 2, 'both dumps on disk');
is(join(' ', hidden()), '', 'nothing hidden left at the end');

$t->no_alerts;
$t->stop;

done_testing;
